import { requestIdFrom } from 'src/http/request-id';

describe('requestIdFrom', () => {
  it.each(['a', 'abc-DEF_1.2', 'x'.repeat(128)])('keeps the caller value %p', (value) => {
    expect(requestIdFrom(value)).toBe(value);
  });

  it.each([undefined, '', 'x'.repeat(129), 'has space', 'slash/no', 'ünï', 'a\nb', 'semi;colon'])(
    'replaces %p with a new id',
    (value) => {
      const id = requestIdFrom(value);
      expect(id).not.toBe(value);
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    },
  );

  it('replaces a repeated header and makes a new id each time', () => {
    expect(requestIdFrom(['a', 'b'])).toMatch(/^[0-9a-f-]{36}$/);
    expect(requestIdFrom(undefined)).not.toBe(requestIdFrom(undefined));
  });
});
