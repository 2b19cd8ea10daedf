import { randomBytes } from 'node:crypto';
import { CursorCodec, InvalidCursorError, cursorScope } from 'src/common/cursor';

const position = { value: '2026-11-22T01:02:03.456Z', id: '0193a6f2-1234-7abc-8def-0123456789ab' };

describe('cursor codec', () => {
  const codec = new CursorCodec(randomBytes(32));
  const scope = cursorScope({ route: 'verifications', accountId: 'a', sort: '-created_at' });

  it('round-trips a position under its scope', () => {
    expect(codec.decode(scope, codec.encode(scope, position))).toEqual(position);
  });

  it('is opaque: the cursor is URL-safe text', () => {
    expect(codec.encode(scope, position)).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('refuses a cursor made for another scope (filters, sort or caller)', () => {
    const other = cursorScope({ route: 'verifications', accountId: 'b', sort: '-created_at' });
    expect(() => codec.decode(other, codec.encode(scope, position))).toThrow(InvalidCursorError);
  });

  it('refuses a cursor made under another key', () => {
    const foreign = new CursorCodec(randomBytes(32));
    expect(() => codec.decode(scope, foreign.encode(scope, position))).toThrow(InvalidCursorError);
  });

  it('goes on across a key rotation: a cursor made under the old key decodes while both are set', () => {
    const [older, newer] = [randomBytes(32), randomBytes(32)];
    const before = new CursorCodec([older]).encode(scope, position);
    const rotating = new CursorCodec([newer, older]);
    expect(rotating.decode(scope, before)).toEqual(position);
    expect(new CursorCodec([newer]).decode(scope, rotating.encode(scope, position))).toEqual(position);
    expect(() => new CursorCodec([newer]).decode(scope, before)).toThrow(InvalidCursorError);
  });

  it('refuses a tampered payload', () => {
    const [, signature] = codec.encode(scope, position).split('.');
    const forged = Buffer.from(JSON.stringify(['2030-01-01T00:00:00.000Z', position.id])).toString('base64url');
    expect(() => codec.decode(scope, `${forged}.${signature}`)).toThrow(InvalidCursorError);
  });

  it('refuses a tampered signature', () => {
    const cursor = codec.encode(scope, position);
    const flipped = cursor.slice(0, -1) + (cursor.endsWith('A') ? 'B' : 'A');
    expect(() => codec.decode(scope, flipped)).toThrow(InvalidCursorError);
  });

  it.each(['', 'garbage', '.', 'a.b', 'a.b.c', '%%%.***', codec.encode(scope, position) + '.x'])(
    'refuses garbage %p',
    (raw) => {
      expect(() => codec.decode(scope, raw)).toThrow(InvalidCursorError);
    },
  );
});

describe('cursorScope', () => {
  it('does not depend on key order', () => {
    expect(cursorScope({ a: 1, b: 'x' })).toBe(cursorScope({ b: 'x', a: 1 }));
  });

  it('treats undefined and null alike and distinguishes every value', () => {
    expect(cursorScope({ q: undefined })).toBe(cursorScope({ q: null }));
    expect(cursorScope({ q: 'a' })).not.toBe(cursorScope({ q: 'b' }));
    expect(cursorScope({ statuses: ['approved'] })).not.toBe(cursorScope({ statuses: ['approved', 'rejected'] }));
  });
});
