import { parse as parseStrictly } from 'lossless-json';

/**
 * JSON.parse, correct on every Node.js line `engines` admits.
 *
 * V8 in Node.js 24 (every release through 24.21.0) and 26 before 26.12.1 can return a wrong key for
 * a one-character key written as an escape (`"\u00e9"`, `"\/"`, `"\""`, `"\n"`): after a parse has
 * met the key `"\\"`, such keys may come back as `"\\"` too (and two keys then merge). Whether it
 * happens depends on the engine's state, so no check at start can tell a sound process from an
 * affected one. Any client can send these keys, so on those runtimes one client's request could
 * change the keys of the next clients' metadata. A text that may hold such a key is therefore parsed
 * by lossless-json's parser (strict JSON, written in JavaScript, not affected), on every runtime; any
 * other text by JSON.parse. The pattern also matches such text inside a string value, which then
 * takes the slower parser, with the same result. One difference remains on that path: a key given
 * twice with different values is refused (JSON.parse keeps the last).
 */
const ONE_CHARACTER_ESCAPED_KEY = /"\\(?:u[0-9A-Fa-f]{4}|["\\/bfnrt])"\s*:/;

export function mayHoldOneCharacterEscapedKey(text: string): boolean {
  return ONE_CHARACTER_ESCAPED_KEY.test(text);
}

/** JSON.parse of trusted or untrusted text, with the runtime's defect avoided (see above). */
export function parseJson(text: string): unknown {
  return mayHoldOneCharacterEscapedKey(text) ? parseStrictly(text, null, Number) : JSON.parse(text);
}
