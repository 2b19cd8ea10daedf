import { Client } from 'pg';
import { runMigrations } from 'src/database/migration-runner';
import { benchDatabaseUrlFrom, recreateBenchDatabase } from '../harness/db';
import type { ApiGet } from '../harness/loads';
import { accountIdSql, inParallel, insertVerifications, seedBenchDatabase, verificationRows } from '../harness/seed';
import { log } from '../harness/report';
import { benchSecret } from '../harness/service-env';

/** The list bench's data: the seed and the requests its scenarios make. */

export const ACCOUNT_COUNT = 1_000;
export const VERIFICATION_COUNT = 1_000_000;
/** Bump when the seeded data's shape changes: an older bench database is then seeded again. */
export const SEED_VERSION = 4;
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

/**
 * Verifications `from`..`to` of the window ending at `windowEnd` (SQL): created_at grows with n (one
 * slot of window/1M per row, ms jitter inside the slot), so the UUIDv7-shaped ids built from it are
 * time-ordered and the primary key is appended to, not scattered. 45 % go to the large accounts,
 * 40.5 % to the medium ones; most users finish within the hour and are decided in minutes, some never.
 */
function listRows(windowEnd: string, from: number, to: number): string {
  const slotMs = Math.floor((SEED_WINDOW_DAYS * 86_400_000) / VERIFICATION_COUNT);
  const medium = LARGE_ACCOUNTS + MEDIUM_ACCOUNTS;
  return verificationRows(from, to, {
    created: `${windowEnd}::timestamptz - interval '${SEED_WINDOW_DAYS} days'
      + ((n::bigint - 1) * ${slotMs} + h6 % ${slotMs}) * interval '1 millisecond'`,
    account: `CASE WHEN h1 % 1000000 < 450000 THEN h1 % ${LARGE_ACCOUNTS}
                   WHEN h1 % 1000000 < 855000 THEN ${LARGE_ACCOUNTS} + h1 % ${MEDIUM_ACCOUNTS}
                   ELSE ${medium} + h1 % ${ACCOUNT_COUNT - medium} END`,
    status: `CASE WHEN created > ${windowEnd}::timestamptz - interval '1 hour' THEN
               CASE WHEN h2 % 100 < 40 THEN 'pending' WHEN h2 % 100 < 70 THEN 'processing'
                    WHEN h2 % 100 < 92 THEN 'approved' ELSE 'rejected' END
             ELSE
               CASE WHEN h2 % 100 < 6 THEN 'pending' WHEN h2 % 100 < 8 THEN 'processing'
                    WHEN h2 % 100 < 78 THEN 'approved' ELSE 'rejected' END END`,
  });
}

/** True when the database exists and holds this seed version's complete data set (the import of main.ts aside). */
async function isSeeded(databaseUrl: string): Promise<boolean> {
  const client = new Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const { rows } = await client.query<{ version: number; n: number }>(
      `SELECT version, (SELECT count(*)::int FROM verifications
                         WHERE account_id <> ${accountIdSql(String(IMPORT_ACCOUNT))}) AS n FROM bench_seed`,
    );
    const [marker] = rows;
    return rows.length === 1 && marker?.version === SEED_VERSION && marker.n === VERIFICATION_COUNT;
  } catch {
    return false; // no database, or no bench_seed table
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Makes sure the bench database exists, is migrated and holds this seed version's data. One that is
 * missing, incomplete, older or `force`d is built again from the migrations, so the measured schema
 * is always the migrations' schema.
 */
export async function prepareBenchDatabase(databaseUrl: string, force: boolean) {
  if (!force && (await isSeeded(databaseUrl))) {
    const applied = (await runMigrations(databaseUrl)).map((name) => `; applied ${name}`);
    log(`bench database already seeded${applied.join('')} (--reseed rebuilds it)`);
    return;
  }
  await recreateBenchDatabase(databaseUrl);
  const windowEnd = `'${new Date(Math.floor(Date.now() / 60_000) * 60_000 - 2 * 3_600_000).toISOString()}'`;
  const shape = { accounts: ACCOUNT_COUNT, createdAt: `${windowEnd}::timestamptz - interval '400 days'` };
  const seconds = await seedBenchDatabase(
    databaseUrl,
    { ...shape, tables: ['verifications'] },
    async (_client, progress) => {
      progress(`inserting ${VERIFICATION_COUNT.toLocaleString('en')} verifications`);
      const half = VERIFICATION_COUNT / 2;
      const halves = [listRows(windowEnd, 1, half), listRows(windowEnd, half + 1, VERIFICATION_COUNT)];
      await insertVerifications(databaseUrl, halves);
    },
  );
  // Last: the marker says the data set is complete.
  await inParallel(databaseUrl, [
    `CREATE TABLE bench_seed AS SELECT ${SEED_VERSION}::int AS version, ${VERIFICATION_COUNT}::bigint AS verifications,
       ${windowEnd}::timestamptz AS window_end, now() AS seeded_at`,
  ]);
  log(`seeded in ${seconds.toFixed(1)} s`);
}
