import { REDACTED, Redactor } from 'src/common/logging/redact';

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
});
