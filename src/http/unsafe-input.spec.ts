import fc from 'fast-check';
import { findInvalidBody, findUnsafeInput, findUnsafeQuery, textIssue } from 'src/http/unsafe-input';

const CONTROL = 'must not contain control characters (U+0000-U+001F, U+007F-U+009F)';
const SURROGATE = 'must not contain a lone surrogate (text must be valid Unicode)';

describe('findUnsafeInput', () => {
  it('accepts ordinary JSON', () => {
    expect(findUnsafeInput({ a: 'x', b: [1, 'y', { c: null }], d: true })).toBeNull();
    expect(findUnsafeInput('plain')).toBeNull();
    expect(findUnsafeInput(undefined)).toBeNull();
  });

  it('names the field holding a NUL character', () => {
    expect(findUnsafeInput({ applicant: { first_name: 'a\u0000' } })).toEqual({
      field: 'applicant.first_name',
      issue: CONTROL,
    });
    expect(findUnsafeInput({ list: ['ok', 'b\u0000'] })).toEqual({
      field: 'list.1',
      issue: CONTROL,
    });
    expect(findUnsafeInput('x\u0000', 'id')).toEqual({ field: 'id', issue: CONTROL });
    expect(findUnsafeInput({ metadata: { 'k\u0000': 'v' } })).toEqual({
      field: 'metadata',
      issue: `${CONTROL} in keys`,
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

describe('textIssue', () => {
  it.each([
    ['U+001F (last C0)', 'a\u001Fb', CONTROL],
    ['U+0020 (space)', 'a b', null],
    ['U+007E (tilde)', 'a~b', null],
    ['U+007F (DEL)', 'a\u007Fb', CONTROL],
    ['U+0080 (first C1)', 'a\u0080b', CONTROL],
    ['U+0085 (NEL)', 'a\u0085b', CONTROL],
    ['U+009F (last C1)', 'a\u009Fb', CONTROL],
    ['U+00A0 (no-break space)', 'a\u00A0b', null],
    ['NUL', '\u0000', CONTROL],
    ['ESC (terminal escape)', '\u001B[31mred', CONTROL],
    ['BEL', 'ding\u0007', CONTROL],
    ['newline', 'two\nlines', CONTROL],
    ['carriage return', 'a\rb', CONTROL],
    ['tab', 'a\tb', CONTROL],
    ['a lone high surrogate', 'a\uD800b', SURROGATE],
    ['a lone low surrogate', 'a\uDC00b', SURROGATE],
    ['a high surrogate at the end', 'ab\uD83D', SURROGATE],
    ['two high surrogates', '\uD83D\uD83D', SURROGATE],
    ['a pair in the wrong order', '\uDE00\uD83D', SURROGATE],
    ['an emoji (a valid pair)', 'ok 😀 \u{1F600}', null],
    ['a flag and a ZWJ family', '🇬🇧 👨‍👩‍👧', null],
    ['combining characters', 'e\u0301 Zoe\u0308', null],
    ['right-to-left text and marks', 'שלום \u200F مرحبا', null],
    ['accented Latin', 'Zoë Ångström-Łódź', null],
    ['the empty string', '', null],
  ])('%s', (_name, text, expected) => {
    expect(textIssue(text)).toBe(expected);
  });

  const controlChar = fc
    .oneof(fc.integer({ min: 0x00, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }))
    .map((code) => String.fromCharCode(code));
  const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
  const isControl = (code: number): boolean => code <= 0x1f || (code >= 0x7f && code <= 0x9f);
  const clean = fc
    .string({ unit: 'grapheme' })
    .filter((text) => [...text].every((char) => !isControl(char.codePointAt(0) ?? 0)));

  it('accepts any text of whole graphemes without control characters', () => {
    fc.assert(fc.property(clean, (text) => textIssue(text) === null && findUnsafeInput({ name: text }) === null));
  });

  it('refuses any text with one control character inserted anywhere', () => {
    fc.assert(
      fc.property(clean, clean, controlChar, (before, after, bad) => {
        expect(textIssue(before + bad + after)).toBe(CONTROL);
        expect(findUnsafeInput({ metadata: { k: before + bad + after } })).toEqual({
          field: 'metadata.k',
          issue: CONTROL,
        });
      }),
    );
  });

  it('refuses any text with one lone surrogate inserted between whole graphemes', () => {
    fc.assert(
      fc.property(clean, clean, loneSurrogate, (before, after, bad) => {
        // A low surrogate right after a high one (or the reverse at the end) would pair up: keep them apart.
        fc.pre(!/[\uD800-\uDBFF]$/.test(before) || !/[\uDC00-\uDFFF]/.test(bad));
        fc.pre(!/^[\uDC00-\uDFFF]/.test(after) || !/[\uD800-\uDBFF]/.test(bad));
        expect(textIssue(before + bad + after)).toBe(SURROGATE);
      }),
    );
  });
});

describe('findUnsafeInput on keys', () => {
  it('refuses control characters and lone surrogates in keys without echoing the key', () => {
    expect(findUnsafeInput({ metadata: { 'a\u001Bb': 'v' } })).toEqual({
      field: 'metadata',
      issue: `${CONTROL} in keys`,
    });
    expect(findUnsafeInput({ metadata: { '\uD800': 'v' } })).toEqual({
      field: 'metadata',
      issue: `${SURROGATE} in keys`,
    });
    expect(findUnsafeInput({ 'x\n': 'v' })).toEqual({ field: 'body', issue: `${CONTROL} in keys` });
  });

  it('names the field holding a lone surrogate', () => {
    expect(findUnsafeInput(JSON.parse('{"applicant":{"last_name":"\\ud800"}}'))).toEqual({
      field: 'applicant.last_name',
      issue: SURROGATE,
    });
  });
});

describe('findInvalidBody', () => {
  it.each([
    ['a bad continuation byte', 'c328'],
    ['0xFF', 'ff'],
    ['an overlong "/"', 'c0af'],
    ['a UTF-8-encoded surrogate', 'eda080'],
    ['a truncated sequence', 'e282'],
  ])('refuses %s', (_name, hex) => {
    const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from(hex, 'hex'), Buffer.from('"}')]);
    expect(findInvalidBody(body)).toEqual({ field: 'body', issue: 'must be valid UTF-8' });
  });

  it('accepts valid UTF-8, astral characters included', () => {
    expect(findInvalidBody(Buffer.from('{"name":"Zoë 😀 שלום"}'))).toBeNull();
  });
});

describe('findUnsafeQuery', () => {
  it.each([
    ['q=%ED%A0%80', { field: 'q', issue: 'must be valid UTF-8' }],
    ['limit=5&q=%FF', { field: 'q', issue: 'must be valid UTF-8' }],
    ['q=%C0%AF', { field: 'q', issue: 'must be valid UTF-8' }],
    ['external_user_id=%1B[31m', { field: 'external_user_id', issue: CONTROL }],
    ['q=a%0Ab', { field: 'q', issue: CONTROL }],
    ['q=a%C2%85', { field: 'q', issue: CONTROL }],
    ['q=%7F', { field: 'q', issue: CONTROL }],
    ['q%1B=x', { field: 'query', issue: `${CONTROL} in parameter names` }],
    ['%FF=x', { field: 'query', issue: 'must be valid UTF-8 in parameter names' }],
  ])('refuses %s', (query, expected) => {
    expect(findUnsafeQuery(query)).toEqual(expected);
  });

  it.each(['', 'q=ada', 'q=Zo%C3%AB+L', 'q=%F0%9F%98%80', 'q=100%', 'q=%zz', 'a&b=&=c', 'q=a+b'])(
    'accepts %s',
    (query) => {
      expect(findUnsafeQuery(query)).toBeNull();
    },
  );
});
