import { Client } from 'pg';
import { encryptSecret, hashSecret } from 'src/accounts/secret-crypto';
import { DOCUMENT_TYPES, REJECTION_REASONS } from 'src/verifications/verification.types';
import { createDatabaseIfMissing, runMigrations } from 'src/database/migrate';
import {
  dropBenchDatabase,
  dropSecondaryIndexes,
  inParallel,
  seedingClient,
  textArray,
  withMaintenanceDb,
} from '../harness/db';
import { BENCH_SECRET_ENCRYPTION_KEY, benchSecret } from '../harness/service-env';
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

/** Account index → deterministic account id (also used by the floor's sanity checks). */
const ACCOUNT_ID_SQL = (index: string): string => `md5('kyc-bench-account-' || ${index})::uuid`;

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
      ${ACCOUNT_ID_SQL('account_index')},
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

/** True when the database holds this seed version's complete data set. */
async function isSeeded(databaseUrl: string): Promise<boolean> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const table = await client.query(`SELECT to_regclass('bench_seed') IS NOT NULL AS present`);
    if (!table.rows[0].present) return false;
    const marker = await client.query('SELECT version, verifications FROM bench_seed');
    if (marker.rowCount !== 1 || marker.rows[0].version !== SEED_VERSION) return false;
    const count = await client.query('SELECT count(*)::int AS n FROM verifications');
    return count.rows[0].n === VERIFICATION_COUNT && Number(marker.rows[0].verifications) === VERIFICATION_COUNT;
  } finally {
    await client.end();
  }
}

/**
 * Seeds a freshly migrated, empty bench database. Secondary indexes are dropped during the bulk
 * insert and rebuilt from their own definitions afterwards, so whatever indexes the migrations
 * define are the ones measured. Returns the seconds it took.
 */
async function seed(databaseUrl: string, log: (line: string) => void): Promise<number> {
  const started = Date.now();
  const client = await seedingClient(databaseUrl);
  try {
    const windowEnd = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 2 * 3_600_000).toISOString();

    await client.query(
      `INSERT INTO accounts (id, name, webhook_url, created_at, updated_at)
       SELECT ${ACCOUNT_ID_SQL('i')}, 'Bench account ' || i, NULL, $1::timestamptz - interval '400 days', $1::timestamptz - interval '400 days'
         FROM generate_series(0, ${ACCOUNT_COUNT - 1}) AS i`,
      [windowEnd],
    );
    const key = Buffer.from(BENCH_SECRET_ENCRYPTION_KEY, 'base64');
    const indexes = Array.from({ length: ACCOUNT_COUNT }, (_, i) => i);
    await client.query(
      `INSERT INTO account_secrets (id, account_id, secret_hash, secret_ciphertext, created_at, expires_at)
       SELECT md5('kyc-bench-secret-' || i)::uuid, ${ACCOUNT_ID_SQL('i')}, hash, ciphertext, $4::timestamptz - interval '400 days', NULL
         FROM unnest($1::int[], $2::bytea[], $3::text[]) AS t(i, hash, ciphertext)`,
      [
        indexes,
        indexes.map((i) => hashSecret(benchSecret(i))),
        indexes.map((i) => encryptSecret(key, benchSecret(i))),
        windowEnd,
      ],
    );

    const defs = await dropSecondaryIndexes(client, ['verifications']);
    log(`seeding: inserting ${VERIFICATION_COUNT.toLocaleString('en')} verifications (${defs.length} indexes dropped)`);
    const half = VERIFICATION_COUNT / 2;
    await inParallel(databaseUrl, [
      verificationsInsert(`'${windowEnd}'`, 1, half),
      verificationsInsert(`'${windowEnd}'`, half + 1, VERIFICATION_COUNT),
    ]);
    log(`seeding: rebuilding indexes (${Math.round((Date.now() - started) / 1000)} s so far)`);
    await inParallel(databaseUrl, defs);
    log(`seeding: vacuum analyze (${Math.round((Date.now() - started) / 1000)} s so far)`);
    await inParallel(databaseUrl, [
      'VACUUM (ANALYZE) verifications',
      'VACUUM (ANALYZE) accounts',
      'VACUUM (ANALYZE) account_secrets',
    ]);
    await client.query(
      `CREATE TABLE bench_seed AS SELECT $1::int AS version, $2::bigint AS verifications, $3::timestamptz AS window_end, now() AS seeded_at`,
      [SEED_VERSION, VERIFICATION_COUNT, windowEnd],
    );
    return (Date.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

/**
 * Makes sure the bench database exists, is migrated and holds this seed version's data. One that is
 * missing, incomplete, older or `force`d is built again from the migrations, so the measured schema
 * is always the migrations' schema.
 */
export async function prepareBenchDatabase(databaseUrl: string, force: boolean, log: (line: string) => void) {
  const exists = await withMaintenanceDb(databaseUrl, async (client, name) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return found.rowCount === 1;
  });
  if (exists && !force && (await isSeeded(databaseUrl))) {
    const applied = await runMigrations(databaseUrl);
    log(
      `bench database already seeded${applied.length ? `; applied ${applied.join(', ')}` : ''} (--reseed rebuilds it)`,
    );
    return;
  }
  await dropBenchDatabase(databaseUrl);
  await createDatabaseIfMissing(databaseUrl);
  await runMigrations(databaseUrl);
  log(`seeded in ${(await seed(databaseUrl, log)).toFixed(1)} s`);
}
