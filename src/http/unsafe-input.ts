import { isUtf8 } from 'node:buffer';
import type { ErrorDetail } from 'src/common/api-error';

const MAX_DEPTH = 16;

// C0, DEL and C1: they reach operators' terminals and logs (escape sequences) and PostgreSQL refuses NUL.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;
// With the u flag only an unpaired half matches: a valid pair is one code point, not a surrogate.
const LONE_SURROGATE = /\p{Surrogate}/u;

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** class-transformer silently drops keys named like Object.prototype members (`constructor`, `toString`...). */
function isObjectMember(key: string): boolean {
  return key === 'prototype' || key in Object.prototype;
}

/**
 * Why a text cannot be stored exactly as given, or null: PostgreSQL would store a lone surrogate as
 * U+FFFD, and control characters are refused outright (the contract allows no newline or tab anywhere).
 */
export function textIssue(text: string): string | null {
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone surrogate (text must be valid Unicode)';
  if (CONTROL.test(text)) return 'must not contain control characters (U+0000-U+001F, U+007F-U+009F)';
  return null;
}

/**
 * Input that passes type checks yet cannot be stored or read back exactly: text with a lone surrogate
 * or a control character (see textIssue), in a value or a key; keys such as `__proto__` or `constructor`
 * (silently dropped by the DTO mapping, even inside metadata, instead of refused), and nesting deeper
 * than any DTO has.
 */
export function findUnsafeInput(value: unknown, path = '', depth = 0): ErrorDetail | null {
  if (typeof value === 'string') {
    const issue = textIssue(value);
    return issue ? { field: path || 'body', issue } : null;
  }
  if (typeof value !== 'object' || value === null) return null;
  if (depth >= MAX_DEPTH) return { field: path || 'body', issue: 'is nested too deeply' };
  const entries: [string, unknown][] = Array.isArray(value)
    ? value.map((item, index) => [String(index), item])
    : Object.entries(value);
  if (!Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, '__proto__')) {
    return { field: join(path, '__proto__'), issue: 'is not allowed' };
  }
  for (const [key, item] of entries) {
    // The key itself is not echoed as the field: it is the unsafe text.
    const keyIssue = textIssue(key);
    if (keyIssue) return { field: path || 'body', issue: `${keyIssue} in keys` };
    if (!Array.isArray(value) && isObjectMember(key)) return { field: join(path, key), issue: 'is not allowed' };
    const problem = findUnsafeInput(item, join(path, key), depth + 1);
    if (problem) return problem;
  }
  return null;
}

export const INVALID_UTF8 = 'must be valid UTF-8';

/** A request body's raw bytes, checked before decoding would replace invalid sequences with U+FFFD. */
export function findInvalidBody(raw: Buffer): ErrorDetail | null {
  return isUtf8(raw) ? null : { field: 'body', issue: INVALID_UTF8 };
}

/** Percent-decoding to bytes (`+` is a space), so that invalid UTF-8 is seen rather than replaced. */
function percentDecode(text: string): Buffer {
  const bytes = Buffer.from(text.replace(/\+/g, ' '), 'latin1');
  const out = Buffer.alloc(bytes.length);
  let length = 0;
  for (let i = 0; i < bytes.length; i += 1) {
    const hex = bytes[i] === 0x25 ? bytes.subarray(i + 1, i + 3).toString('latin1') : '';
    if (/^[0-9a-f]{2}$/i.test(hex)) {
      out[length] = parseInt(hex, 16);
      i += 2;
    } else {
      out[length] = bytes[i];
    }
    length += 1;
  }
  return out.subarray(0, length);
}

/**
 * A raw query string (without `?`) whose names or values are not valid UTF-8 text without control
 * characters. Express's parser would replace invalid bytes with U+FFFD, so the raw form is checked.
 */
export function findUnsafeQuery(rawQuery: string): ErrorDetail | null {
  for (const pair of rawQuery.split('&')) {
    if (pair === '') continue;
    const equals = pair.indexOf('=');
    const nameBytes = percentDecode(equals < 0 ? pair : pair.slice(0, equals));
    const valueBytes = percentDecode(equals < 0 ? '' : pair.slice(equals + 1));
    const name = nameBytes.toString('utf8');
    const nameIssue = isUtf8(nameBytes) ? textIssue(name) : INVALID_UTF8;
    // The name is not echoed as the field when it is the unsafe text.
    if (nameIssue) return { field: 'query', issue: `${nameIssue} in parameter names` };
    if (!isUtf8(valueBytes)) return { field: name, issue: INVALID_UTF8 };
    const valueIssue = textIssue(valueBytes.toString('utf8'));
    if (valueIssue) return { field: name, issue: valueIssue };
  }
  return null;
}
