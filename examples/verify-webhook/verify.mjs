#!/usr/bin/env node
// Verifies one KYC webhook (Standard Webhooks signature) with Node.js alone, no package needed.
//
//   KYC_WEBHOOK_SECRET=whsec_… node verify.mjs <webhook-id> <webhook-timestamp> '<webhook-signature>' < body
//
// Prints "verified" and exits 0, or prints why not and exits 1. The body must be the raw bytes
// received, before any JSON parsing. A timestamp more than KYC_WEBHOOK_TOLERANCE_SECONDS (default
// 300) away from now is refused as a replay; 0 skips that check (for the published test vector only).
import { createHmac, timingSafeEqual } from 'node:crypto';

export function verify(secret, id, timestamp, signatureHeader, body, toleranceSeconds = 300, now = Date.now()) {
  if (!/^\d+$/.test(timestamp)) return 'bad timestamp';
  if (toleranceSeconds > 0 && Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) return 'timestamp too old or too new';
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), body]);
  const expected = createHmac('sha256', key).update(signed).digest();
  // One "v1,<base64>" per active secret, separated by spaces (two during a secret's rotation).
  for (const part of signatureHeader.split(' ')) {
    const [version, value] = part.split(',', 2);
    if (version !== 'v1' || value === undefined) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return null;
  }
  return 'no signature matches';
}

const [id, timestamp, signature] = process.argv.slice(2);
const secret = process.env.KYC_WEBHOOK_SECRET;
if (!secret || !id || !timestamp || !signature) {
  console.error('usage: KYC_WEBHOOK_SECRET=whsec_… node verify.mjs <webhook-id> <webhook-timestamp> <webhook-signature> < body');
  process.exit(2);
}
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const tolerance = Number(process.env.KYC_WEBHOOK_TOLERANCE_SECONDS ?? 300);
const problem = verify(secret, id, timestamp, signature, Buffer.concat(chunks), tolerance);
console.log(problem === null ? 'verified' : `not verified: ${problem}`);
process.exit(problem === null ? 0 : 1);
