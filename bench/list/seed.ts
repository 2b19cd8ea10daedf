import { Client } from 'pg';
import { runMigrations } from 'src/database/migrate';
import { recreateBenchDatabase } from '../harness/db';
import { accountIdSql, inParallel, insertVerifications, seedBenchDatabase, verificationRows } from '../harness/seed';
import { ACCOUNT_COUNT, IMPORT_ACCOUNT, LARGE_ACCOUNTS, MEDIUM_ACCOUNTS, SEED_VERSION } from './data';
import { SEED_WINDOW_DAYS, VERIFICATION_COUNT } from './data';

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
export async function prepareBenchDatabase(databaseUrl: string, force: boolean, log: (line: string) => void) {
  if (!force && (await isSeeded(databaseUrl))) {
    const applied = await runMigrations(databaseUrl);
    log(
      `bench database already seeded${applied.length ? `; applied ${applied.join(', ')}` : ''} (--reseed rebuilds it)`,
    );
    return;
  }
  await recreateBenchDatabase(databaseUrl);
  const windowEnd = `'${new Date(Math.floor(Date.now() / 60_000) * 60_000 - 2 * 3_600_000).toISOString()}'`;
  const shape = {
    accounts: ACCOUNT_COUNT,
    createdAt: `${windowEnd}::timestamptz - interval '400 days'`,
    tables: ['verifications'],
  };
  const seconds = await seedBenchDatabase(databaseUrl, shape, log, async (_client, progress) => {
    progress(`inserting ${VERIFICATION_COUNT.toLocaleString('en')} verifications`);
    const half = VERIFICATION_COUNT / 2;
    await insertVerifications(databaseUrl, [
      listRows(windowEnd, 1, half),
      listRows(windowEnd, half + 1, VERIFICATION_COUNT),
    ]);
  });
  // Last: the marker says the data set is complete.
  await inParallel(databaseUrl, [
    `CREATE TABLE bench_seed AS SELECT ${SEED_VERSION}::int AS version, ${VERIFICATION_COUNT}::bigint AS verifications,
       ${windowEnd}::timestamptz AS window_end, now() AS seeded_at`,
  ]);
  log(`seeded in ${seconds.toFixed(1)} s`);
}
