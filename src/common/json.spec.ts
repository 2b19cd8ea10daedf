import fc from 'fast-check';
import { mayHoldOneCharacterEscapedKey, parseJson } from 'src/common/json';

/** A key written with an escape, as `JSON.stringify` never writes it but clients' encoders do. */
const escaped = (key: string): string =>
  [...key].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');

const ONE_CHARACTER_KEYS: Array<[string, string]> = [
  ['"\\u00e9"', 'é'],
  ['"\\u0041"', 'A'],
  ['"\\/"', '/'],
  ['"\\""', '"'],
  ['"\\n"', '\n'],
  ['"\\\\"', '\\'],
];

describe('parseJson', () => {
  it('reads one-character escaped keys right after a backslash key', () => {
    for (const [written, key] of ONE_CHARACTER_KEYS) {
      // The defect's trigger: the key "\\" met by an earlier parse.
      JSON.parse('{"\\\\": 0}');
      const parsed = parseJson(`{"x": 1, ${written}: 2}`) as Record<string, number>;
      expect(Object.keys(parsed)).toEqual(['x', key]);
      expect(parsed[key]).toBe(2);
    }
  });

  it('reads metadata written with escaped keys as written', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 2 }), fc.string()), (metadata) => {
        JSON.parse('{"\\\\": 0}');
        const text = `{${Object.entries(metadata)
          .map(([key, value]) => `"${escaped(key)}": ${JSON.stringify(value)}`)
          .join(', ')}}`;
        expect(parseJson(text)).toEqual(metadata);
      }),
      { numRuns: 300 },
    );
  });

  it('reads any JSON as JSON.parse on a sound runtime, escaped one-character keys too', () => {
    fc.assert(
      fc.property(fc.json(), (text) => {
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what JSON.parse refuses, on the slower path too', () => {
    for (const text of ['{"\\n": 1,}', '{"\\n": 01}', '{"\\n": NaN}', '{"\\n": 1']) {
      expect(mayHoldOneCharacterEscapedKey(text)).toBe(true);
      expect(() => JSON.parse(text)).toThrow();
      expect(() => parseJson(text)).toThrow();
    }
  });

  it('takes the native parser when no one-character escaped key can be in the text', () => {
    expect(mayHoldOneCharacterEscapedKey('{"name": "a\\nb", "éé": 1, "\\u00e9\\u00e9": 2}')).toBe(false);
    expect(mayHoldOneCharacterEscapedKey('{"\\u00e9" : 1}')).toBe(true);
  });
});
