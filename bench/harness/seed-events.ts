import { uuidV7Sql } from './seed';
import { iso } from './sql';

/** What the seeds with a delivery log (retention, year) share: events and attempts as the service writes them. */

/**
 * The `verification.status_changed` events of the verifications `where` picks (SQL over `v`, the
 * verification, and `k.version`), one per version up to v.version: version 1 pending at creation,
 * 2 processing at submission, 3 the status it has now, at its last update. Bodies are shaped as
 * buildOutboxEvent writes them (the verification as toVerificationResponse maps it, compact JSON,
 * the same key order; `json_build_object` keeps key order, its spacing is removed afterwards). An
 * event is delivered by one attempt, or, where `failed` (SQL over `s`, the step, and `v`) holds,
 * failed after 8 attempts answered HTTP 500 within two hours.
 */
export function eventsInsert(where: string, failed = 'false'): string {
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
        CASE k.version WHEN 1 THEN v.created_at WHEN 2 THEN v.submitted_at ELSE v.updated_at END AS at,
        CASE WHEN k.version >= 2 THEN v.submitted_at END AS submitted_at,
        CASE WHEN k.version = 3 THEN v.decided_at END AS decided_at,
        CASE WHEN k.version = 3 THEN v.rejection_reasons ELSE '{}'::text[] END AS reasons
      FROM verifications v CROSS JOIN (VALUES (1), (2), (3)) AS k(version)
      WHERE k.version <= v.version AND ${where}
    ), s AS (
      SELECT steps.*, ${uuidV7Sql('steps.at', `steps.verification_id::text || steps.version`)} AS event_id FROM steps
    )
    INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status,
                                attempt_count, cycle, cycle_attempts, last_attempt_at, last_response_status,
                                last_error, next_attempt_at, delivered_at)
    SELECT s.event_id, v.account_id, v.id, 'verification.status_changed',
      replace(replace(replace(${body}, '" : ', '":'), ', "', ',"'), '": ', '":'), s.at,
      CASE WHEN f.failed THEN 'failed' ELSE 'delivered' END, CASE WHEN f.failed THEN 8 ELSE 1 END, 1,
      CASE WHEN f.failed THEN 8 ELSE 1 END,
      s.at + CASE WHEN f.failed THEN interval '2 hours' ELSE interval '5 milliseconds' END,
      CASE WHEN f.failed THEN 500 ELSE 200 END, CASE WHEN f.failed THEN 'HTTP 500' END, NULL,
      CASE WHEN NOT f.failed THEN s.at + interval '40 milliseconds' END
    FROM s JOIN verifications v ON v.id = s.verification_id CROSS JOIN LATERAL (SELECT ${failed} AS failed) AS f`;
}

/**
 * Every event's attempts, as its columns say: attempt_count of them, the last at last_attempt_at
 * with its status and error, the earlier ones spread before it; a third of the successful ones kept
 * a response excerpt. `where` (SQL over `e`) picks the events.
 */
export function attemptsInsert(where = 'true'): string {
  return `
    INSERT INTO webhook_attempts (event_id, number, at, response_status, duration_ms, error, response_body)
    SELECT e.id, n.number, e.last_attempt_at - (e.attempt_count - n.number) * interval '15 minutes',
      e.last_response_status, 20 + (hashtext(e.id::text) & 63), e.last_error,
      CASE WHEN e.last_error IS NULL AND hashtext(e.id::text) % 3 = 0 THEN '{"received":true,"event":"' || e.id || '"}' END
    FROM webhook_events e CROSS JOIN LATERAL generate_series(1, e.attempt_count) AS n(number) WHERE ${where}`;
}
