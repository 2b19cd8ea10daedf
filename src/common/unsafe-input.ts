import type { ErrorDetail } from 'src/common/api-error';

const MAX_DEPTH = 16;

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** class-transformer silently drops keys named like Object.prototype members (`constructor`, `toString`...). */
function isObjectMember(key: string): boolean {
  return key === 'prototype' || key in Object.prototype;
}

/**
 * Input that passes type checks yet cannot be stored or read safely: NUL characters (PostgreSQL
 * text and jsonb refuse them, which would surface as a 500), keys such as `__proto__` or `constructor`
 * (silently dropped by the DTO mapping, even inside metadata, instead of refused), and nesting deeper
 * than any DTO has.
 */
export function findUnsafeInput(value: unknown, path = '', depth = 0): ErrorDetail | null {
  if (typeof value === 'string') {
    return value.includes('\u0000') ? { field: path || 'body', issue: 'must not contain NUL characters' } : null;
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
    if (key.includes('\u0000')) return { field: path || 'body', issue: 'must not contain NUL characters in keys' };
    if (!Array.isArray(value) && isObjectMember(key)) return { field: join(path, key), issue: 'is not allowed' };
    const problem = findUnsafeInput(item, join(path, key), depth + 1);
    if (problem) return problem;
  }
  return null;
}
