import { benchDatabaseUrlFrom } from '../harness/db';
import { benchSecret } from '../harness/service-env';
import type { ApiGet } from '../harness/loads';

/** What the list bench's seeder, floor and load agree on. */

export const ACCOUNT_COUNT = 1_000;
export const VERIFICATION_COUNT = 1_000_000;
/** Bump when the seeded data's shape changes: an older bench database is then seeded again. */
export const SEED_VERSION = 3;
/** Accounts 0-9 hold ~45,000 verifications each, 10-99 ~4,500, 100-999 ~160 (seed.ts). */
export const LARGE_ACCOUNTS = 10;
export const MEDIUM_ACCOUNTS = 90;
/** The big new client of the stale-statistics case (stale.ts): not seeded, imported and removed by each run. */
export const IMPORT_ACCOUNT = ACCOUNT_COUNT;
/** created_at of the seeded verifications spreads over this many days before the seed. */
export const SEED_WINDOW_DAYS = 365;

export const LIST_PATH = '/api/v1/public/kyc/verifications';

/** BENCH_DATABASE_URL, else DATABASE_URL renamed to kyc_bench; a name without "bench" is refused. */
export function benchDatabaseUrl(): string {
  return benchDatabaseUrlFrom('BENCH_DATABASE_URL', 'kyc_bench');
}

/** The accounts with enough rows for a page after 200 hops: every scenario uses the same ones. */
export const ACCOUNTS = Array.from({ length: LARGE_ACCOUNTS + MEDIUM_ACCOUNTS }, (_, i) => i);

export function perAccount(query: string): ApiGet[] {
  return ACCOUNTS.map((account) => ({ path: `${LIST_PATH}?${query}`, secret: benchSecret(account) }));
}

/** Name, surname, e-mail and external-id fragments, from rare (one surname) to common (a domain). */
const Q_FRAGMENTS = ['garc', 'lovelace', 'ann', 'user-42', 'tanaka', 'example.de', 'okafor', 'sofia'];

/** Every account with every fragment, interleaved so consecutive requests differ in both. */
export function qRequests(): ApiGet[] {
  return ACCOUNTS.flatMap((account, i) =>
    Q_FRAGMENTS.map((_, j) => ({
      path: `${LIST_PATH}?q=${encodeURIComponent(Q_FRAGMENTS[(i + j) % Q_FRAGMENTS.length] as string)}`,
      secret: benchSecret(account),
    })),
  );
}
