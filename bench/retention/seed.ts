import { inParallel, insertVerifications, seedBenchDatabase, uuidV7Sql, verificationRows } from '../harness/seed';
import { fmt } from '../harness/report';
import { FLOOR_POOL, SERVICE_POOL, iso, type AgeWindow } from './floor';

/**
 * `total` verifications of a pool, numbered from `first`, created inside its age window (less 2 h,
 * so the decision, within 70 minutes, stays inside too), oldest first, so heap and ids are in time
 * order as a live table's are; all decided, a quarter rejected.
 */
function agedRows(window: AgeWindow, first: number, total: number, accounts: number, now: string): string {
  const slotMs = Math.floor(((window.maxDays - window.minDays) * 86_400_000 - 7_200_000) / total);
  return verificationRows(first, first + total - 1, {
    created: `${now}::timestamptz - interval '${window.maxDays} days'
      + ((n::bigint - ${first}) * ${slotMs} + h6 % ${slotMs}) * interval '1 millisecond'`,
    account: `h1 % ${accounts}`,
    status: `CASE WHEN h2 % 4 = 0 THEN 'rejected' ELSE 'approved' END`,
  });
}

/** Recent verifications (created in the last day, never aged), one a second: what the list's first pages show. */
function recentRows(first: number, total: number, accounts: number, now: string): string {
  return verificationRows(first, first + total - 1, {
    created: `${now}::timestamptz - interval '1 day' + (n - ${first}) * interval '1 second'`,
    account: `n % ${accounts}`,
    status: `'approved'`,
  });
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
export async function seed(databaseUrl: string, accounts: number, aged: number, recent: number) {
  const now = `'${new Date().toISOString()}'`;
  const tables = ['verifications', 'webhook_events', 'webhook_attempts'];
  const shape = { accounts, createdAt: `${now}::timestamptz - interval '400 days'`, tables };
  return seedBenchDatabase(databaseUrl, shape, async (client, progress) => {
    progress(`${fmt(2 * aged)} aged verifications, ${fmt(accounts * recent)} recent ones`);
    await insertVerifications(databaseUrl, [
      agedRows(SERVICE_POOL, 1, aged, accounts, now),
      agedRows(FLOOR_POOL, aged + 1, aged, accounts, now),
      recentRows(2 * aged + 1, accounts * recent, accounts, now),
    ]);
    progress('events, 3 per aged verification');
    // One statement per pool, in parallel.
    const agedBetween = (window: AgeWindow): string =>
      `v.decided_at >= ${now}::timestamptz - interval '${window.maxDays + 1} days' AND v.decided_at < ${now}::timestamptz - interval '${window.minDays} days'`;
    await inParallel(databaseUrl, [eventsInsert(agedBetween(SERVICE_POOL)), eventsInsert(agedBetween(FLOOR_POOL))]);
    await client.query(attemptsInsert());
  });
}
