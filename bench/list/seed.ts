import { Client } from 'pg';
import { runMigrations } from 'src/database/migrate';
import { DOCUMENT_TYPES, REJECTION_REASONS } from 'src/verifications/verification.types';
import { accountIdSql, inParallel, recreateBenchDatabase, seedBenchDatabase, textArray } from '../harness/db';
import {
  ACCOUNT_COUNT,
  LARGE_ACCOUNTS,
  MEDIUM_ACCOUNTS,
  SEED_WINDOW_DAYS,
  SEED_VERSION,
  VERIFICATION_COUNT,
} from './data';

const FIRST_NAMES =
  'Ada Alan Grace Linus Margaret Dennis Barbara Ken Frances Edsger Radia Donald Anna Hannah Joanna Annette Maria Mariana Jose Juan Sofia Lucia Mateo Chen Wei Yuki Hiroshi Aiko Priya Arjun Fatima Omar Amara Chinedu Olga Ivan Sven Ingrid Pierre Camille Giulia Marco Emma Noah Olivia Liam Zoe Kofi'.split(
    ' ',
  );
const LAST_NAMES =
  'Lovelace Turing Hopper Torvalds Hamilton Ritchie Liskov Thompson Allen Dijkstra Perlman Knuth Smith Johnson Williams Brown Jones Garcia Martinez Rodriguez Hernandez Lopez Gonzalez Wilson Anderson Taylor Moore Jackson Martin Lee Nguyen Tanaka Yamamoto Suzuki Sato Kim Park Wang Zhang Li Patel Sharma Singh Khan Okafor Adeyemi Mensah Ivanova Petrov Novak Kowalski Muller Schmidt Rossi Bianchi Dubois Lefebvre Andersson Johansson Hansen Silva Santos'.split(
    ' ',
  );
const EMAIL_DOMAINS = ['example.com', 'mail.example.org', 'inbox.example.net', 'corp.example.io', 'post.example.de'];
const COUNTRIES = ['GB', 'US', 'DE', 'FR', 'ES', 'IT', 'NL', 'PL', 'SE', 'NG', 'IN', 'JP', 'BR', 'CA'];
const PLANS = ['gold', 'silver', 'basic'];

/**
 * One INSERT … SELECT over generate_series(from, to). Every attribute comes from hashint8 of the row
 * number, so the data set is the same on every seed. created_at grows with n (one slot of
 * window/1M per row, ms jitter inside the slot), so the UUIDv7-shaped ids built from it are
 * time-ordered and the primary key is appended to, not scattered.
 */
function verificationsInsert(windowEndParam: string, from: number, to: number): string {
  const slotMs = Math.floor((SEED_WINDOW_DAYS * 86_400_000) / VERIFICATION_COUNT);
  const medium = LARGE_ACCOUNTS + MEDIUM_ACCOUNTS;
  return `
    WITH base AS (
      SELECT n,
        (hashint8(n::bigint * 8 + 1)::bigint + 2147483648) AS h1,
        (hashint8(n::bigint * 8 + 2)::bigint + 2147483648) AS h2,
        (hashint8(n::bigint * 8 + 3)::bigint + 2147483648) AS h3,
        (hashint8(n::bigint * 8 + 4)::bigint + 2147483648) AS h4,
        (hashint8(n::bigint * 8 + 5)::bigint + 2147483648) AS h5,
        ${windowEndParam}::timestamptz - interval '${SEED_WINDOW_DAYS} days'
          + ((n::bigint - 1) * ${slotMs} + (hashint8(n::bigint * 8 + 6)::bigint + 2147483648) % ${slotMs}) * interval '1 millisecond'
          AS created
      FROM generate_series(${from}, ${to}) AS n
    ), shaped AS (
      SELECT *,
        CASE WHEN h1 % 1000000 < 450000 THEN h1 % ${LARGE_ACCOUNTS}
             WHEN h1 % 1000000 < 855000 THEN ${LARGE_ACCOUNTS} + h1 % ${MEDIUM_ACCOUNTS}
             ELSE ${medium} + h1 % ${ACCOUNT_COUNT - medium} END AS account_index,
        -- Most users finish within the hour and are decided in minutes; some never finish.
        CASE WHEN created > ${windowEndParam}::timestamptz - interval '1 hour' THEN
               CASE WHEN h2 % 100 < 40 THEN 'pending' WHEN h2 % 100 < 70 THEN 'processing'
                    WHEN h2 % 100 < 92 THEN 'approved' ELSE 'rejected' END
             ELSE
               CASE WHEN h2 % 100 < 6 THEN 'pending' WHEN h2 % 100 < 8 THEN 'processing'
                    WHEN h2 % 100 < 78 THEN 'approved' ELSE 'rejected' END END AS status,
        (${textArray(FIRST_NAMES)})[1 + h3 % ${FIRST_NAMES.length}] AS first_name,
        (${textArray(LAST_NAMES)})[1 + (h3 / ${FIRST_NAMES.length}) % ${LAST_NAMES.length}] AS last_name,
        created + (h4 % 600000) * interval '1 millisecond' AS submitted,
        created + (h4 % 600000 + 1000 + h5 % 3600000) * interval '1 millisecond' AS decided,
        floor(extract(epoch FROM created) * 1000)::bigint AS created_ms,
        md5(n::text) AS rnd
      FROM base
    )
    INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at,
                               submitted_at, decided_at, applicant, document, rejection_reasons, metadata)
    SELECT
      (lpad(to_hex(created_ms), 12, '0') || '7' || substr(rnd, 1, 3) || substr('89ab', 1 + (h5 % 4)::int, 1)
        || substr(rnd, 4, 15))::uuid,
      ${accountIdSql('account_index')},
      'user-' || (h5 % 10000000),
      status,
      CASE status WHEN 'pending' THEN CASE WHEN h2 % 10 = 0 THEN 3 ELSE 1 END WHEN 'processing' THEN 2 ELSE 3 END,
      created,
      CASE status WHEN 'pending' THEN CASE WHEN h2 % 10 = 0 THEN decided ELSE created END
                  WHEN 'processing' THEN submitted ELSE decided END,
      CASE WHEN status = 'pending' AND h2 % 10 <> 0 THEN NULL ELSE submitted END,
      CASE WHEN status IN ('approved', 'rejected') THEN decided END,
      CASE WHEN status = 'pending' AND h3 % 5 = 0 THEN NULL ELSE jsonb_build_object(
        'first_name', first_name,
        'last_name', last_name,
        'date_of_birth', to_char(date '1950-01-01' + (h4 % 20000)::int, 'YYYY-MM-DD'),
        'email', lower(first_name) || '.' || lower(last_name) || (h5 % 1000) || '@'
                 || (${textArray(EMAIL_DOMAINS)})[1 + h4 % ${EMAIL_DOMAINS.length}]) END,
      CASE WHEN status = 'pending' THEN NULL ELSE jsonb_build_object(
        'type', (${textArray(DOCUMENT_TYPES)})[1 + h5 % ${DOCUMENT_TYPES.length}],
        'country', (${textArray(COUNTRIES)})[1 + h3 % ${COUNTRIES.length}]) END,
      CASE WHEN status = 'rejected'
           THEN ARRAY[(${textArray(REJECTION_REASONS)})[1 + h4 % ${REJECTION_REASONS.length}]] ELSE '{}' END,
      CASE WHEN h1 % 2 = 0 THEN jsonb_build_object('plan', (${textArray(PLANS)})[1 + h2 % ${PLANS.length}])
           ELSE '{}'::jsonb END
    FROM shaped`;
}

/** True when the database exists and holds this seed version's complete data set. */
async function isSeeded(databaseUrl: string): Promise<boolean> {
  const client = new Client({ connectionString: databaseUrl });
  try {
    await client.connect();
    const { rows } = await client.query<{ version: number; n: number }>(
      'SELECT version, (SELECT count(*)::int FROM verifications) AS n FROM bench_seed',
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
    await inParallel(databaseUrl, [
      verificationsInsert(windowEnd, 1, half),
      verificationsInsert(windowEnd, half + 1, VERIFICATION_COUNT),
    ]);
  });
  // Last: the marker says the data set is complete.
  await inParallel(databaseUrl, [
    `CREATE TABLE bench_seed AS SELECT ${SEED_VERSION}::int AS version, ${VERIFICATION_COUNT}::bigint AS verifications,
       ${windowEnd}::timestamptz AS window_end, now() AS seeded_at`,
  ]);
  log(`seeded in ${seconds.toFixed(1)} s`);
}
