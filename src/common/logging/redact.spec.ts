import fc from 'fast-check';
import { REDACTED, Redactor } from 'src/common/logging/redact';

const encodeAll = (text: string, upper = true) =>
  [...Buffer.from(text)]
    .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
    .map((escape) => (upper ? escape.toUpperCase() : escape))
    .join('');

/** Every way the security review wrote a secret or its bare key into a URL. */
function encodings(key: string): string[] {
  const urlSafe = key.replaceAll('+', '-').replaceAll('/', '_');
  const secret = `whsec_${key}`;
  const partly = (text: string) => text.replaceAll('+', '%2B').replaceAll('/', '%2f').replaceAll('=', '%3D');
  return [
    secret,
    key,
    urlSafe,
    urlSafe.replace(/=$/, ''),
    `whsec_${urlSafe}`,
    encodeURIComponent(secret),
    encodeURIComponent(secret).toLowerCase(),
    encodeURIComponent(key),
    partly(secret),
    partly(key),
    `whsec%5F${partly(key)}`,
    `whsec%5f${key}`,
    encodeAll(secret),
    encodeAll(secret, false),
    encodeAll(key),
    encodeURIComponent(encodeURIComponent(secret)),
    encodeURIComponent(encodeURIComponent(key)),
    encodeAll(encodeAll(secret)),
  ];
}

/** Decodes everything decodable, so a test sees what a reader of the log could recover. */
function recoverable(text: string): string {
  let out = text;
  for (let i = 0; i < 5; i++)
    out = out.replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => Buffer.from(run.replaceAll('%', ''), 'hex').toString('latin1'));
  return out;
}

describe('Redactor', () => {
  const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
  const redactor = new Redactor(['admin-0123456789abcdef', 'short']);

  it('removes webhook secrets, bearer credentials and configured tokens from text', () => {
    const line = `key ${secret} auth "Bearer abc.def" header Basic dXNlcjpw token admin-0123456789abcdef!`;
    const out = redactor.text(line);
    expect(out).not.toContain(secret);
    expect(out).not.toContain('abc.def');
    expect(out).not.toContain('dXNlcjpw');
    expect(out).not.toContain('admin-0123456789abcdef');
    expect(out).toContain(`Bearer ${REDACTED}`);
  });

  it('does not treat short literals as secrets', () => {
    expect(redactor.text('a short story')).toBe('a short story');
  });

  it('redacts values under secret-named keys at any depth, keeping the rest', () => {
    const out = redactor.value({
      headers: { authorization: 'Bearer x', accept: 'json' },
      body: [{ webhook_secret: 'abc', name: 'n' }],
      ok: true,
      n: 3,
    });
    expect(out).toEqual({
      headers: { authorization: REDACTED, accept: 'json' },
      body: [{ webhook_secret: REDACTED, name: 'n' }],
      ok: true,
      n: 3,
    });
  });

  it('flattens errors and scrubs their message, stack and cause', () => {
    const error = new Error(`bad ${secret}`, { cause: new Error('admin-0123456789abcdef leaked') });
    const out = redactor.value({ err: error }) as {
      err: { message: string; stack: string; cause: { message: string } };
    };
    expect(JSON.stringify(out)).not.toContain(secret);
    expect(out.err.message).toBe(`bad ${REDACTED}`);
    expect(out.err.cause.message).toBe(`${REDACTED} leaked`);
  });

  it('survives cycles and leaves class instances to the serializers', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    expect(redactor.value(cyclic)).toEqual({ a: 1, self: '[Object]' });
    const instance = new (class Thing {})();
    expect((redactor.value({ instance }) as { instance: unknown }).instance).toBe(instance);
  });

  it('removes a secret or its bare key written into a URL, whole, percent-encoded in part or in whole, in any case, twice encoded', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        const key = Buffer.from(bytes).toString('base64');
        const urlSafe = key.replaceAll('+', '-').replaceAll('/', '_');
        // Unpadded URL-safe text is taken for a key only when it mixes digits and both cases, so that identifiers stay;
        // about 1 random key in 1,500 (and fast-check's favourite, all zero bytes) does not, and is left out of that form.
        const mixes = /\d/.test(urlSafe) && /[A-Z]/.test(urlSafe) && /[a-z]/.test(urlSafe);
        const unpadded = urlSafe.replace(/=$/, '');
        for (const form of encodings(key).filter((form) => mixes || form !== unpadded)) {
          const line = `{"msg":"GET /api/v1/admin/x/${form}?a=1 404","path":"/api/v1/admin/x/${form}"}`;
          const out = recoverable(redactor.text(line));
          for (const part of [key.slice(0, 16), key.slice(22, 38), urlSafe.slice(0, 16), urlSafe.slice(22, 38)]) {
            expect([form, out.includes(part)]).toEqual([form, false]);
          }
          expect(out).toContain('GET /api/v1/admin/x/');
          expect(out).toContain(REDACTED);
        }
      }),
    );
  });

  it('keeps the line well-formed when it decodes an escape to find a secret', () => {
    const key = Buffer.alloc(32, 9).toString('base64');
    const line = JSON.stringify({ path: `/x/%22%0A${encodeURIComponent(`whsec_${key}`)}` });
    expect(JSON.parse(redactor.text(line))).toEqual({ path: `/x/%22%0A${REDACTED}` });
  });

  it('never throws on malformed escapes and leaves them, and ordinary URLs, as they were', () => {
    for (const text of [
      '%',
      '100% done',
      '%zz%4',
      '/a/%E0%A4%A/%FF%FE',
      '/api/v1/public/kyc/verifications?status=approved%2Crejected&limit=50',
      '/api/v1/public/kyc/verifications/0f8fad5b-d9cb-469f-a165-70867728950e',
      'verification_state_machine_transition_rules_v2',
      'at Object.<anonymous> (/srv/app/node_modules/@nestjs/core/router/router-explorer.js:12:34)',
    ]) {
      expect(redactor.text(text)).toBe(text);
    }
  });

  it('clips after redacting, so a secret cut by the limit is still removed', () => {
    const key = Buffer.alloc(32, 5).toString('base64');
    const path = `/api/v1/admin/some/long/prefix/${encodeURIComponent(key)}/${'z'.repeat(200)}`;
    const out = redactor.clipped(path, 64);
    expect(out).toBe(`/api/v1/admin/some/long/prefix/${REDACTED}/${'z'.repeat(64 - 42)}…`);
    expect(redactor.clipped('/short', 64)).toBe('/short');
  });
});
