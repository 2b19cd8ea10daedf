import { findUnsafeInput } from 'src/common/unsafe-input';

describe('findUnsafeInput', () => {
  it('accepts ordinary JSON', () => {
    expect(findUnsafeInput({ a: 'x', b: [1, 'y', { c: null }], d: true })).toBeNull();
    expect(findUnsafeInput('plain')).toBeNull();
    expect(findUnsafeInput(undefined)).toBeNull();
  });

  it('names the field holding a NUL character', () => {
    expect(findUnsafeInput({ applicant: { first_name: 'a\u0000' } })).toEqual({
      field: 'applicant.first_name',
      issue: 'must not contain NUL characters',
    });
    expect(findUnsafeInput({ list: ['ok', 'b\u0000'] })).toEqual({
      field: 'list.1',
      issue: 'must not contain NUL characters',
    });
    expect(findUnsafeInput('x\u0000', 'id')).toEqual({ field: 'id', issue: 'must not contain NUL characters' });
    expect(findUnsafeInput({ metadata: { 'k\u0000': 'v' } })).toEqual({
      field: 'metadata',
      issue: 'must not contain NUL characters in keys',
    });
  });

  it('refuses __proto__ keys at any depth', () => {
    expect(findUnsafeInput(JSON.parse('{"__proto__": {"x": 1}}'))).toEqual({
      field: '__proto__',
      issue: 'is not allowed',
    });
    expect(findUnsafeInput(JSON.parse('{"metadata": {"__proto__": "x"}}'))).toEqual({
      field: 'metadata.__proto__',
      issue: 'is not allowed',
    });
  });

  it.each(['constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype'])(
    'refuses a %s key, which the DTO mapping would drop',
    (key) => {
      expect(findUnsafeInput({ metadata: { [key]: 'x' } })).toEqual({
        field: `metadata.${key}`,
        issue: 'is not allowed',
      });
      expect(findUnsafeInput({ [key]: 'x' })).toEqual({ field: key, issue: 'is not allowed' });
    },
  );

  it('refuses deep nesting instead of recursing without bound', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 10_000; i += 1) deep = [deep];
    expect(findUnsafeInput({ a: deep })?.issue).toBe('is nested too deeply');
  });
});
