import type { LookupAddress, LookupOptions } from 'node:dns';
import fc from 'fast-check';
import { guardedLookup, isIpLiteral, isPublicUnicast } from 'src/webhooks/delivery/ip-policy';

/** An IPv4 address as a 32-bit number, written the usual way. */
const dotted = (v4: number) => [24, 16, 8, 0].map((shift) => (v4 >>> shift) & 0xff).join('.');
const high = (v4: number) => v4 >>> 16;
const low = (v4: number) => v4 & 0xffff;

/** The ways one IPv6 address can be written: expanded, short hex, compressed, dotted tail, upper case. */
function spellings(groups: number[]): string[] {
  const hex = groups.map((group) => group.toString(16));
  const tail = `${dotted(((groups[6] << 16) | groups[7]) >>> 0)}`;
  const forms = [
    groups.map((group) => group.toString(16).padStart(4, '0')).join(':'),
    hex.join(':'),
    compress(hex),
    `${hex.slice(0, 6).join(':')}:${tail}`,
    compress([...hex.slice(0, 6), tail]),
  ];
  return [...forms, ...forms.map((form) => form.toUpperCase())];
}

/** Replaces the longest run of two or more zero groups with `::`. */
function compress(parts: string[]): string {
  let best = { start: -1, length: 0 };
  for (let start = 0; start < parts.length; start++) {
    let length = 0;
    while (parts[start + length] === '0') length++;
    if (length >= 2 && length > best.length) best = { start, length };
  }
  if (best.start < 0) return parts.join(':');
  return `${parts.slice(0, best.start).join(':')}::${parts.slice(best.start + best.length).join(':')}`;
}

/** Every IPv6 form that carries an IPv4 address, with the other bits drawn from `noise`. */
const EMBEDDINGS: Record<string, (v4: number, noise: number[]) => number[]> = {
  'IPv4-compatible ::/96': (v4) => [0, 0, 0, 0, 0, 0, high(v4), low(v4)],
  'IPv4-mapped ::ffff:0:0/96': (v4) => [0, 0, 0, 0, 0, 0xffff, high(v4), low(v4)],
  'IPv4-translated ::ffff:0:0:0/96': (v4) => [0, 0, 0, 0, 0xffff, 0, high(v4), low(v4)],
  'NAT64 64:ff9b::/96': (v4) => [0x64, 0xff9b, 0, 0, 0, 0, high(v4), low(v4)],
  'NAT64 local 64:ff9b:1::/48, /96 layout': (v4, n) => [0x64, 0xff9b, 1, n[0], n[1], 0, high(v4), low(v4)],
  'NAT64 local 64:ff9b:1::/48, /48 layout': (v4) => [
    0x64,
    0xff9b,
    1,
    high(v4),
    (v4 >>> 8) & 0xff,
    (v4 & 0xff) << 8,
    0,
    0,
  ],
  '6to4 2002::/16': (v4, n) => [0x2002, high(v4), low(v4), n[0], n[1], n[2], n[3], n[4]],
  'Teredo 2001::/32, client': (v4, n) => [0x2001, 0, n[0], n[1], n[2], n[3], high(~v4 >>> 0), low(~v4 >>> 0)],
  'Teredo 2001::/32, server': (v4, n) => [0x2001, 0, high(v4), low(v4), n[0], n[1], n[2], n[3]],
};

const NON_PUBLIC_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const v4Number = (text: string) => text.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
const inRange = (v4: number, [base, bits]: [string, number]) =>
  bits === 0 || v4 >>> (32 - bits) === v4Number(base) >>> (32 - bits);

const nonPublicV4 = fc
  .constantFrom(...NON_PUBLIC_V4)
  .chain(([base, bits]) => fc.integer({ min: 0, max: 2 ** (32 - bits) - 1 }).map((host) => v4Number(base) + host));
const publicV4 = fc
  .integer({ min: 0, max: 2 ** 32 - 1 })
  .filter((v4) => !NON_PUBLIC_V4.some((range) => inRange(v4, range)) && v4 !== 0xffffffff);
const group = fc.integer({ min: 0, max: 0xffff });
const noise = fc.array(group, { minLength: 5, maxLength: 5 });

describe('isPublicUnicast', () => {
  it.each([
    // The security review's forms (IPv4-compatible ::a.b.c.d), which an earlier classifier allowed.
    '::127.0.0.1',
    '::169.254.169.254',
    '::10.0.0.1',
    '::7f00:1',
    '0:0:0:0:0:0:A9FE:A9FE',
    '::8.8.8.8',
    // Transition forms, refused before too.
    '::ffff:127.0.0.1',
    '::FFFF:7F00:1',
    '::ffff:0:127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b::8.8.8.8',
    '64:ff9b:1::7f00:1',
    '2002:7f00:1::',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    // Ranges that are not global unicast.
    '::',
    '::1',
    'fe80::1',
    'fe80::1%eth0',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    'ff0e::1',
    'fec0::1',
    '100::1',
    '2001:db8::1',
    '2001:2::1',
    '2001:10::1',
    '2001:20::1',
    '3ffe:831f::1',
    '3fff::1',
    '5f00::1',
    '4000::1',
    'e000::1',
    '1::1',
    // Plain IPv4 and garbage.
    '127.0.0.1',
    '10.1.2.3',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '0x7f.1',
    'example.com',
    '',
  ])('refuses %s', (address) => {
    expect(isPublicUnicast(address)).toBe(false);
  });

  it.each([
    '8.8.8.8',
    '93.184.216.34',
    '::ffff:8.8.8.8',
    '2606:4700:4700::1111',
    '2a00:1450:4001:82a::200e',
    '2c0f:f248::1',
  ])('allows %s', (address) => {
    expect(isPublicUnicast(address)).toBe(true);
  });

  it.each(Object.keys(EMBEDDINGS))('refuses a non-public IPv4 address embedded as %s, however written', (name) => {
    fc.assert(
      fc.property(nonPublicV4, noise, (v4, bits) => {
        for (const text of spellings(EMBEDDINGS[name](v4, bits))) {
          expect(isIpLiteral(text)).toBe(true);
          expect([text, isPublicUnicast(text)]).toEqual([text, false]);
        }
      }),
    );
  });

  it('allows public IPv4 addresses, plain and IPv4-mapped', () => {
    fc.assert(
      fc.property(publicV4, (v4) => {
        expect(isPublicUnicast(dotted(v4))).toBe(true);
        expect(isPublicUnicast(`::ffff:${dotted(v4)}`)).toBe(true);
      }),
    );
  });

  it('allows plain global unicast IPv6 in the regional registries’ blocks, however written', () => {
    const registryBlock = fc.constantFrom(0x2400, 0x2600, 0x2800, 0x2a00, 0x2c00);
    fc.assert(
      fc.property(
        registryBlock,
        fc.integer({ min: 0, max: 0xf }),
        fc.array(group, { minLength: 7, maxLength: 7 }),
        (block, sub, rest) => {
          for (const text of spellings([block + sub, ...rest])) {
            expect([text, isPublicUnicast(text)]).toEqual([text, true]);
          }
        },
      ),
    );
  });
});

function resolverOf(addresses: LookupAddress[]) {
  return (
    _host: string,
    _options: LookupOptions & { all: true },
    callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => callback(null, addresses);
}

function run(
  addresses: LookupAddress[],
  all: boolean,
): Promise<{ err: NodeJS.ErrnoException | null; address: string | LookupAddress[] }> {
  return new Promise((resolve) =>
    guardedLookup(resolverOf(addresses))('hooks.example.com', { all }, (err, address) => resolve({ err, address })),
  );
}

describe('guardedLookup', () => {
  it.each([
    ['127.0.0.1', 4],
    ['10.0.0.1', 4],
    ['169.254.169.254', 4],
    ['100.64.0.1', 4],
    ['0.0.0.0', 4],
    ['224.0.0.1', 4],
    ['::1', 6],
    ['::ffff:127.0.0.1', 6],
    ['fe80::1', 6],
    ['fc00::1', 6],
    ['::7f00:1', 6],
    ['::a9fe:a9fe', 6],
    ['::a00:1', 6],
    ['64:ff9b::7f00:1', 6],
    ['2002:7f00:1::', 6],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 6],
  ])('refuses a name that resolves to %s', async (address, family) => {
    const { err } = await run([{ address, family }], false);
    expect(err?.message).toBe('blocked: private address');
    expect(err?.code).toBe('EBLOCKED');
  });

  it('refuses when any of several answers is private (no picking the public one)', async () => {
    const { err } = await run(
      [
        { address: '93.184.216.34', family: 4 },
        { address: '10.1.2.3', family: 4 },
      ],
      true,
    );
    expect(err?.code).toBe('EBLOCKED');
  });

  it('passes public unicast answers through in the form asked for', async () => {
    const answers = [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ];
    expect(await run(answers, true)).toEqual({ err: null, address: answers });
    expect((await run(answers, false)).address).toBe('93.184.216.34');
  });

  it('passes DNS errors through', async () => {
    const failing = (
      _h: string,
      _o: LookupOptions & { all: true },
      callback: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void,
    ) => callback(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }), []);
    const err = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      guardedLookup(failing)('nope.invalid', {}, (e) => resolve(e)),
    );
    expect(err?.code).toBe('ENOTFOUND');
  });
});
