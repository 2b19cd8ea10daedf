import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';

const BEARER = /^bearer +([\x21-\x7e]+) *$/i;

/** The token of an `Authorization: Bearer <token>` header (scheme word case-insensitive), or null. */
export function bearerToken(req: Request): string | null {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/** Constant-time comparison that does not leak the expected token's length. */
export function tokensEqual(candidate: string, expected: string): boolean {
  const a = createHash('sha256').update(candidate).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
