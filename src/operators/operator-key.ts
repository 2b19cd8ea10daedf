import { createHash, randomBytes } from 'node:crypto';

/** What tells an operator key apart from every other Bearer credential. */
export const OPERATOR_KEY_PREFIX = 'kyc_op_';
export const DEFAULT_EXPIRES_IN_DAYS = 90;
export const MAX_EXPIRES_IN_DAYS = 365;

const KEY_SHAPE = /^kyc_op_[A-Za-z0-9_-]{43}$/;
const DAY_MS = 86_400_000;

/** `kyc_op_` + base64url of 32 random bytes. */
export function newOperatorKey(): string {
  return OPERATOR_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** How a key is stored and looked up: 256 random bits need no slow hash. */
export function operatorKeyHash(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Whether a Bearer token is meant as an operator key (any other `kyc_op_…` text is simply unknown). */
export function isOperatorKeyToken(token: string): boolean {
  return token.startsWith(OPERATOR_KEY_PREFIX);
}

/** A token that could be a key this service issued; anything else is refused without a query. */
export function hasOperatorKeyShape(token: string): boolean {
  return KEY_SHAPE.test(token);
}

export function expiryOf(createdAt: Date, days: number): Date {
  return new Date(createdAt.getTime() + days * DAY_MS);
}
