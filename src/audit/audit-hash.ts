import { createHash } from 'node:crypto';

/** The `previous_hash` of the first entry of the trail. */
export const GENESIS_HASH = '0'.repeat(64);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function sorted(value: Json): Json {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value).sort()) out[key] = sorted(value[key]);
  return out;
}

/** JSON with the keys of every object sorted (by UTF-16 code units) and no spaces; JSON.stringify's escaping. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value as Json));
}

/**
 * An entry's hash: lower-case hex SHA-256 of its `previous_hash`, a line feed, and the entry as the
 * export shows it without `hash`, as canonical JSON.
 */
export function auditEntryHash(entry: { readonly previous_hash: string; readonly hash?: unknown }): string {
  const { hash: _hash, ...hashed } = entry;
  return createHash('sha256')
    .update(`${entry.previous_hash}\n${canonicalJson(hashed)}`)
    .digest('hex');
}
