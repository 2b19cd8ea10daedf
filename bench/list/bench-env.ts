import { createHash } from 'node:crypto';

/** Everything the list benchmark's seeder, floor and driver must agree on. */

export const ACCOUNT_COUNT = 1_000;
export const VERIFICATION_COUNT = 1_000_000;
/** Bump when the seeded data's shape changes: an older bench database is then re-seeded. */
export const SEED_VERSION = 2;

/** Accounts 0-9 hold ~45,000 verifications each, 10-99 ~4,500, 100-999 ~160 (see seed.ts). */
export const LARGE_ACCOUNTS = 10;
export const MEDIUM_ACCOUNTS = 90;

function digest(label: string): Buffer {
  return createHash('sha256').update(`kyc-bench:${label}`).digest();
}

/** Deterministic, so a re-run against an already seeded database still knows every credential. */
export function benchSecret(accountIndex: number): string {
  return `whsec_${digest(`secret:${accountIndex}`).toString('base64')}`;
}

export const BENCH_SECRET_ENCRYPTION_KEY = digest('secret-encryption-key').toString('base64');
export const BENCH_ADMIN_TOKEN = digest('admin-token').toString('base64url');
export const BENCH_INTERNAL_API_TOKEN = digest('internal-api-token').toString('base64url');

/**
 * The bench database: BENCH_DATABASE_URL, else DATABASE_URL (or the contract's default) with the
 * database renamed to kyc_bench. Any name without "bench" in it is refused: the seeder truncates.
 */
export function benchDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env.BENCH_DATABASE_URL;
  const url = new URL(explicit ?? env.DATABASE_URL ?? 'postgres://postgres@localhost:5432/kyc');
  if (!explicit) url.pathname = '/kyc_bench';
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!/bench/.test(name)) throw new Error(`Refusing to use database "${name}": its name does not say bench`);
  return url.toString();
}

/** created_at of the seeded verifications spreads evenly over this many days before the seed. */
export const SEED_VERIFICATIONS_WINDOW_DAYS = 365;
