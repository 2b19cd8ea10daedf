import type { LookupAddress, LookupOptions } from 'node:dns';
import { guardedLookup } from 'src/webhooks/webhook-http.client';

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
