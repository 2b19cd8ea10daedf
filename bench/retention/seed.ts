import { Client } from 'pg';
import { encryptSecret, hashSecret } from 'src/accounts/secret-crypto';
import { toVerificationResponse } from 'src/verifications/verification.mapper';
import { VERIFICATION_COLUMNS, type Verification } from 'src/verifications/verification.entity';
import { DOCUMENT_TYPES, REJECTION_REASONS } from 'src/verifications/verification.types';
import { benchDatabaseUrlFrom, dropSecondaryIndexes, inParallel, seedingClient, textArray } from '../harness/db';
import { BENCH_SECRET_ENCRYPTION_KEY, benchSecret } from '../harness/service-env';
import { SERVICE_POOL, FLOOR_POOL, type AgeWindow } from './windows';

/** What the seed builds; the bench prints it. */
export interface SeedShape {
  accounts: number;
  /** Aged verifications per pool (the service's pass, the floor): 3 events each. */
  aged: number;
  /** Recent verifications per account: the list's first pages. */
  recentPerAccount: number;
}

/** BENCH_RETENTION_DATABASE_URL, else DATABASE_URL renamed to kyc_retention_bench (dropped per run). */
export function benchDatabaseUrl(): string {
  return benchDatabaseUrlFrom('BENCH_RETENTION_DATABASE_URL', 'kyc_retention_bench');
}

/** Account index → deterministic account id. */
export const ACCOUNT_ID_SQL = (index: string): string => `md5('kyc-retention-bench-account-' || ${index})::uuid`;

const FIRST_NAMES = ['Ada', 'Alan', 'Grace', 'Linus', 'Margaret', 'Dennis', 'Barbara', 'Sofia', 'Wei', 'Amara'];
const LAST_NAMES = ['Lovelace', 'Turing', 'Hopper', 'Torvalds', 'Hamilton', 'Okafor', 'Tanaka', 'Garcia', 'Novak'];
const COUNTRIES = ['GB', 'US', 'DE', 'FR', 'ES', 'IT', 'NL', 'PL', 'SE', 'NG', 'IN', 'JP', 'BR', 'CA'];
const PLANS = ['gold', 'silver', 'basic'];

/** A UUIDv7-shaped id from a timestamp and a seed text, like the service's (time-ordered). */
function uuidV7Sql(at: string, seed: string): string {
  return `(lpad(to_hex(floor(extract(epoch FROM ${at}) * 1000)::bigint), 12, '0') || '7' || substr(md5(${seed}), 1, 3)
           || substr('89ab', 1 + (get_byte(decode(md5(${seed}), 'hex'), 15) % 4), 1) || substr(md5(${seed}), 4, 15))::uuid`;
}

/**
 * Verifications n = from..to of a pool, decided inside its age window, oldest first (so heap and
 * ids are in time order, as a live table's are). Every attribute comes from hashint8(n), so every
 * seed is the same. Applicant, document and metadata are filled; a quarter are rejected.
 */
function agedVerificationsInsert(window: AgeWindow, total: number, accounts: number, nowParam: string): string {
  const spanMs = (window.maxDays - window.minDays) * 86_400_000;
  const slotMs = Math.floor(spanMs / total);
  return `
    WITH base AS (
      SELECT n,
        (hashint8(n::bigint * 8 + ${window.salt})::bigint + 2147483648) AS h1,
        (hashint8(n::bigint * 8 + ${window.salt + 1})::bigint + 2147483648) AS h2,
        (hashint8(n::bigint * 8 + ${window.salt + 2})::bigint + 2147483648) AS h3,
        (hashint8(n::bigint * 8 + ${window.salt + 3})::bigint + 2147483648) AS h4,
        date_trunc('milliseconds', ${nowParam}::timestamptz - interval '${window.maxDays} days'
          + ((n::bigint - 1) * ${slotMs} + (hashint8(n::bigint * 8 + ${window.salt + 4})::bigint + 2147483648) % ${slotMs})
            * interval '1 millisecond') AS decided
      FROM generate_series(1, ${total}) AS n
    ), shaped AS (
      SELECT *,
        decided - (120000 + h2 % 3600000) * interval '1 millisecond' AS created,
        (${textArray(FIRST_NAMES)})[1 + h3 % ${FIRST_NAMES.length}] AS first_name,
        (${textArray(LAST_NAMES)})[1 + (h3 / ${FIRST_NAMES.length}) % ${LAST_NAMES.length}] AS last_name,
        CASE WHEN h4 % 4 = 0 THEN 'rejected' ELSE 'approved' END AS status
      FROM base
    )
    INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at,
                               submitted_at, decided_at, applicant, document, rejection_reasons, metadata)
    SELECT ${uuidV7Sql('created', `'${window.salt}-' || n`)},
      ${ACCOUNT_ID_SQL(`(h1 % ${accounts})`)},
      'user-' || (h1 % 10000000),
      status, 3, created, decided,
      created + (1000 + h3 % 60000) * interval '1 millisecond',
      decided,
      jsonb_build_object('first_name', first_name, 'last_name', last_name,
        'date_of_birth', to_char(date '1950-01-01' + (h4 % 20000)::int, 'YYYY-MM-DD'),
        'email', lower(first_name) || '.' || lower(last_name) || (h2 % 1000) || '@example.com'),
      jsonb_build_object('type', (${textArray(DOCUMENT_TYPES)})[1 + h2 % ${DOCUMENT_TYPES.length}],
        'country', (${textArray(COUNTRIES)})[1 + h4 % ${COUNTRIES.length}]),
      CASE WHEN status = 'rejected' THEN ARRAY[(${textArray(REJECTION_REASONS)})[1 + h3 % ${REJECTION_REASONS.length}]]
           ELSE '{}' END,
      jsonb_build_object('plan', (${textArray(PLANS)})[1 + h1 % ${PLANS.length}], 'source', 'web')
    FROM shaped`;
}

/** Recent verifications (created in the last day, never aged): what the list's first pages show. */
function recentVerificationsInsert(accounts: number, perAccount: number, nowParam: string): string {
  return `
    INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at,
                               submitted_at, decided_at, applicant, document, rejection_reasons, metadata)
    SELECT ${uuidV7Sql('created', `'recent-' || n`)}, ${ACCOUNT_ID_SQL(`(n % ${accounts})`)}, 'user-r' || n,
      'approved', 3, created, created + interval '5 minutes', created + interval '1 minute', created + interval '5 minutes',
      jsonb_build_object('first_name', 'Grace', 'last_name', 'Hopper', 'date_of_birth', '1990-12-09',
        'email', 'grace.hopper' || n || '@example.com'),
      jsonb_build_object('type', 'passport', 'country', 'US'), '{}', jsonb_build_object('plan', 'gold')
    FROM (SELECT n, date_trunc('milliseconds', ${nowParam}::timestamptz - interval '1 day'
                 + n * interval '1 second') AS created
            FROM generate_series(1, ${accounts * perAccount}) AS n) AS r`;
}

/** An ISO 8601 UTC timestamp with milliseconds, as the service's JSON has them (or JSON null). */
function isoSql(value: string): string {
  return `to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * The three `verification.status_changed` events of every aged verification (created: pending,
 * version 1; submitted: processing, version 2; decided, version 3), with bodies shaped as
 * buildOutboxEvent writes them (the verification as toVerificationResponse maps it, compact JSON,
 * the same key order), each delivered by one attempt; a third of the attempts kept a response
 * excerpt. `json_build_object` keeps key order; its spacing is removed afterwards.
 */
function eventsInsert(where: string): string {
  const verificationJson = `json_build_object(
      'id', v.id, 'object', 'verification', 'external_user_id', v.external_user_id,
      'status', s.status, 'version', s.version,
      'created_at', ${isoSql('v.created_at')}, 'updated_at', ${isoSql('s.at')},
      'submitted_at', ${isoSql('s.submitted_at')}, 'decided_at', ${isoSql('s.decided_at')},
      'applicant', json_build_object('first_name', v.applicant->>'first_name', 'last_name', v.applicant->>'last_name',
                                     'date_of_birth', v.applicant->>'date_of_birth', 'email', v.applicant->>'email'),
      'document', json_build_object('type', v.document->>'type', 'country', v.document->>'country'),
      'rejection_reasons', to_json(s.reasons), 'metadata', v.metadata, 'redacted_at', NULL)`;
  const body = `json_build_object('id', s.event_id, 'type', 'verification.status_changed',
      'timestamp', ${isoSql('s.at')},
      'data', json_build_object('previous_status', s.previous, 'verification', ${verificationJson}))::text`;
  return `
    WITH steps AS (
      SELECT v.id AS verification_id, k.version,
        CASE k.version WHEN 1 THEN 'pending' WHEN 2 THEN 'processing' ELSE v.status END AS status,
        CASE k.version WHEN 1 THEN NULL WHEN 2 THEN 'pending' ELSE 'processing' END AS previous,
        CASE k.version WHEN 1 THEN v.created_at WHEN 2 THEN v.submitted_at ELSE v.decided_at END AS at,
        CASE WHEN k.version >= 2 THEN v.submitted_at END AS submitted_at,
        CASE WHEN k.version = 3 THEN v.decided_at END AS decided_at,
        CASE WHEN k.version = 3 THEN v.rejection_reasons ELSE '{}'::text[] END AS reasons
      FROM verifications v CROSS JOIN (VALUES (1), (2), (3)) AS k(version)
      WHERE ${where}
    ), s AS (
      SELECT steps.*, ${uuidV7Sql('steps.at', `steps.verification_id::text || steps.version`)} AS event_id FROM steps
    )
    INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status,
                                attempt_count, cycle, cycle_attempts, last_attempt_at, last_response_status,
                                next_attempt_at, delivered_at)
    SELECT s.event_id, v.account_id, v.id, 'verification.status_changed',
      replace(replace(replace(${body}, '" : ', '":'), ', "', ',"'), '": ', '":'),
      s.at, 'delivered', 1, 1, 1, s.at + interval '5 milliseconds', 200, NULL, s.at + interval '40 milliseconds'
    FROM s JOIN verifications v ON v.id = s.verification_id`;
}

function attemptsInsert(): string {
  return `
    INSERT INTO webhook_attempts (event_id, number, at, response_status, duration_ms, error, response_body)
    SELECT e.id, 1, e.last_attempt_at, 200, 20 + (hashtext(e.id::text) & 63),
      NULL, CASE WHEN hashtext(e.id::text) % 3 = 0 THEN '{"received":true,"event":"' || e.id || '"}' END
    FROM webhook_events e`;
}

/**
 * Seeds the freshly migrated database: `shape.accounts` accounts without a webhook URL, each with
 * one secret (bench:list's derivation); the service's and the floor's aged pools; the recent rows.
 * Returns the seconds it took.
 */
export async function seed(databaseUrl: string, shape: SeedShape, log: (line: string) => void): Promise<number> {
  const started = Date.now();
  const client = await seedingClient(databaseUrl);
  try {
    const now = `'${new Date().toISOString()}'`;
    await client.query(
      `INSERT INTO accounts (id, name, webhook_url, created_at, updated_at)
       SELECT ${ACCOUNT_ID_SQL('i')}, 'Retention bench account ' || i, NULL, now() - interval '400 days', now() - interval '400 days'
         FROM generate_series(0, ${shape.accounts - 1}) AS i`,
    );
    const key = Buffer.from(BENCH_SECRET_ENCRYPTION_KEY, 'base64');
    const indexes = Array.from({ length: shape.accounts }, (_, i) => i);
    await client.query(
      `INSERT INTO account_secrets (id, account_id, secret_hash, secret_ciphertext, created_at, expires_at)
       SELECT md5('kyc-retention-bench-secret-' || i)::uuid, ${ACCOUNT_ID_SQL('i')}, hash, ciphertext, now() - interval '400 days', NULL
         FROM unnest($1::int[], $2::bytea[], $3::text[]) AS t(i, hash, ciphertext)`,
      [indexes, indexes.map((i) => hashSecret(benchSecret(i))), indexes.map((i) => encryptSecret(key, benchSecret(i)))],
    );
    const defs = await dropSecondaryIndexes(client, ['verifications', 'webhook_events']);
    log(
      `seeding: ${(2 * shape.aged).toLocaleString('en')} aged verifications with 3 events each, ${(shape.accounts * shape.recentPerAccount).toLocaleString('en')} recent ones (${defs.length} secondary indexes dropped)`,
    );
    await inParallel(databaseUrl, [
      agedVerificationsInsert(SERVICE_POOL, shape.aged, shape.accounts, now),
      agedVerificationsInsert(FLOOR_POOL, shape.aged, shape.accounts, now),
    ]);
    await client.query(recentVerificationsInsert(shape.accounts, shape.recentPerAccount, now));
    log(`seeding: events (${Math.round((Date.now() - started) / 1000)} s so far)`);
    // One statement per pool, in parallel.
    const agedBetween = (window: AgeWindow): string =>
      `v.decided_at >= ${now}::timestamptz - interval '${window.maxDays + 1} days' AND v.decided_at < ${now}::timestamptz - interval '${window.minDays} days'`;
    await inParallel(databaseUrl, [eventsInsert(agedBetween(SERVICE_POOL)), eventsInsert(agedBetween(FLOOR_POOL))]);
    await client.query(attemptsInsert());
    log(`seeding: rebuilding indexes (${Math.round((Date.now() - started) / 1000)} s so far)`);
    await inParallel(databaseUrl, defs);
    log(`seeding: vacuum analyze (${Math.round((Date.now() - started) / 1000)} s so far)`);
    await inParallel(databaseUrl, [
      'VACUUM (ANALYZE) verifications',
      'VACUUM (ANALYZE) webhook_events',
      'VACUUM (ANALYZE) webhook_attempts',
      'VACUUM (ANALYZE) accounts',
      'VACUUM (ANALYZE) account_secrets',
    ]);
    return (Date.now() - started) / 1000;
  } finally {
    await client.end();
  }
}

/**
 * The seeded bodies must be what the service would have written, or the pass's JSON work is not
 * the real one: the decided event of one verification per pool is compared with
 * toVerificationResponse of its row (values and key order), and the body must be compact JSON.
 */
export async function checkSeededBodies(databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const window of [SERVICE_POOL, FLOOR_POOL]) {
      const { rows } = await client.query<Verification>(
        `SELECT ${VERIFICATION_COLUMNS} FROM verifications
          WHERE decided_at BETWEEN now() - make_interval(days => $1) AND now() - make_interval(days => $2)
            AND status = 'rejected' LIMIT 1`,
        [window.maxDays, window.minDays],
      );
      const row = rows[0];
      if (!row) throw new Error(`seed check: no rejected verification in the ${window.name} pool`);
      const events = await client.query<{ body: string }>(
        `SELECT body FROM webhook_events WHERE verification_id = $1 ORDER BY created_at`,
        [row.id],
      );
      if (events.rowCount !== 3) throw new Error(`seed check: ${events.rowCount} events for ${row.id}, not 3`);
      const body = events.rows[2]?.body as string;
      const payload = JSON.parse(body) as { data: { verification: unknown } };
      const expected = JSON.stringify(toVerificationResponse(row));
      if (JSON.stringify(payload) !== body) throw new Error(`seed check: the body is not compact JSON: ${body}`);
      if (JSON.stringify(payload.data.verification) !== expected)
        throw new Error(`seed check: the body's verification differs from the mapper's:\n${body}\n${expected}`);
    }
  } finally {
    await client.end();
  }
}
