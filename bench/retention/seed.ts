import { DOCUMENT_TYPES, REJECTION_REASONS } from 'src/verifications/verification.types';
import { accountIdSql, inParallel, seedBenchDatabase, textArray } from '../harness/db';
import { FLOOR_POOL, SERVICE_POOL, iso, type AgeWindow } from './floor';

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
      ${accountIdSql(`(h1 % ${accounts})`)},
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
    SELECT ${uuidV7Sql('created', `'recent-' || n`)}, ${accountIdSql(`(n % ${accounts})`)}, 'user-r' || n,
      'approved', 3, created, created + interval '5 minutes', created + interval '1 minute', created + interval '5 minutes',
      jsonb_build_object('first_name', 'Grace', 'last_name', 'Hopper', 'date_of_birth', '1990-12-09',
        'email', 'grace.hopper' || n || '@example.com'),
      jsonb_build_object('type', 'passport', 'country', 'US'), '{}', jsonb_build_object('plan', 'gold')
    FROM (SELECT n, date_trunc('milliseconds', ${nowParam}::timestamptz - interval '1 day'
                 + n * interval '1 second') AS created
            FROM generate_series(1, ${accounts * perAccount}) AS n) AS r`;
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
      'created_at', ${iso('v.created_at')}, 'updated_at', ${iso('s.at')},
      'submitted_at', ${iso('s.submitted_at')}, 'decided_at', ${iso('s.decided_at')},
      'applicant', json_build_object('first_name', v.applicant->>'first_name', 'last_name', v.applicant->>'last_name',
                                     'date_of_birth', v.applicant->>'date_of_birth', 'email', v.applicant->>'email'),
      'document', json_build_object('type', v.document->>'type', 'country', v.document->>'country'),
      'rejection_reasons', to_json(s.reasons), 'metadata', v.metadata, 'redacted_at', NULL)`;
  const body = `json_build_object('id', s.event_id, 'type', 'verification.status_changed',
      'timestamp', ${iso('s.at')},
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
 * Seeds the freshly migrated database: `accounts` accounts without a webhook URL; `aged`
 * verifications in each of the service's and the floor's aged pools, 3 events each; `recent`
 * verifications per account for the list's first pages. Returns the seconds it took.
 */
export async function seed(
  databaseUrl: string,
  accounts: number,
  aged: number,
  recent: number,
  log: (line: string) => void,
) {
  const now = `'${new Date().toISOString()}'`;
  const shape = {
    accounts,
    createdAt: `${now}::timestamptz - interval '400 days'`,
    tables: ['verifications', 'webhook_events', 'webhook_attempts'],
  };
  return seedBenchDatabase(databaseUrl, shape, log, async (client, progress) => {
    progress(
      `${(2 * aged).toLocaleString('en')} aged verifications, ${(accounts * recent).toLocaleString('en')} recent ones`,
    );
    await inParallel(databaseUrl, [
      agedVerificationsInsert(SERVICE_POOL, aged, accounts, now),
      agedVerificationsInsert(FLOOR_POOL, aged, accounts, now),
    ]);
    await client.query(recentVerificationsInsert(accounts, recent, now));
    progress('events, 3 per aged verification');
    // One statement per pool, in parallel.
    const agedBetween = (window: AgeWindow): string =>
      `v.decided_at >= ${now}::timestamptz - interval '${window.maxDays + 1} days' AND v.decided_at < ${now}::timestamptz - interval '${window.minDays} days'`;
    await inParallel(databaseUrl, [eventsInsert(agedBetween(SERVICE_POOL)), eventsInsert(agedBetween(FLOOR_POOL))]);
    await client.query(attemptsInsert());
  });
}
