#!/usr/bin/env node
// Checks an audit trail export offline, with nothing but Node.js:
//   curl -s "$BASE/api/v1/admin/audit-events/export" -H "authorization: Bearer $TOKEN" > trail.ndjson
//   node verify-audit.mjs trail.ndjson        (or: … | node verify-audit.mjs)
// Exit 0: "N entries, sequences A–B, chain intact, anchor <previous_hash of the first>".
// Exit 1: the first entry whose sequence, previous_hash or hash is not what the chain says.
// Written apart from the service's code on purpose: it is what an auditor runs, and it checks the
// rule as published (hash = SHA-256 hex of previous_hash + "\n" + the entry without `hash`, as JSON
// with keys sorted at every depth and no spaces).
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

function canonical(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const keys = Object.keys(value).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
}

function hashOf(entry) {
  const { hash: _ignored, ...rest } = entry;
  return createHash('sha256')
    .update(`${entry.previous_hash}\n${canonical(rest)}`, 'utf8')
    .digest('hex');
}

const input = process.argv[2] ? createReadStream(process.argv[2]) : process.stdin;
let first;
let last;
let count = 0;
for await (const line of createInterface({ input, crlfDelay: Infinity })) {
  if (line.trim() === '') continue;
  const entry = JSON.parse(line);
  const fail = (why) => {
    console.error(`audit: sequence ${entry.sequence}: ${why}`);
    process.exit(1);
  };
  if (last && entry.sequence !== last.sequence + 1) fail(`follows sequence ${last.sequence} (an entry is missing)`);
  if (last && entry.previous_hash !== last.hash) fail('previous_hash is not the hash of the entry before');
  if (hashOf(entry) !== entry.hash) fail('hash does not match the entry (it was altered)');
  first ??= entry;
  last = entry;
  count += 1;
}
if (!first) {
  console.log('audit: no entries');
} else {
  console.log(
    `audit: ${count} entries, sequences ${first.sequence}–${last.sequence}, chain intact, anchor ${first.previous_hash}`,
  );
}
