import type { SqlParams } from 'src/common/sql-params';

/** The personal fields of a verification in its contract JSON, as a redaction leaves them. */
export interface ErasedVerificationFields {
  external_user_id: string;
  applicant: null;
  document: null;
  metadata: Record<string, never>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A stored webhook body with its verification's personal fields replaced by `erased` and
 * `redacted_at` set; ids, type, timestamp, status and version stay as they were at that event's
 * change, and so does the order of the keys (the body is signed afresh at its next attempt). A body
 * that carries no verification is returned unchanged.
 */
export function redactEventBody(body: string, erased: ErasedVerificationFields, redactedAt: string): string {
  const payload: unknown = JSON.parse(body);
  if (!isObject(payload) || !isObject(payload.data) || !isObject(payload.data.verification)) return body;
  const verification = payload.data.verification;
  for (const [field, value] of Object.entries(erased)) {
    if (field in verification) verification[field] = value;
  }
  verification.redacted_at = redactedAt;
  return JSON.stringify(payload);
}

/** A stored event of a verification being redacted: its id and the body to rewrite. */
export interface StoredEventBody {
  id: string;
  verificationId: string;
  body: string;
}

/**
 * The bodies of every event of the given verifications (of the given accounts), locked in id order
 * so that two erasures touching the same events cannot deadlock each other. $1 account ids, $2
 * verification ids. (test/retention.e2e-spec.ts finds workers waiting on this statement by its text.)
 */
export const EVENT_BODIES_OF_VERIFICATIONS_SQL = `
  SELECT id, verification_id AS "verificationId", body FROM webhook_events
   WHERE account_id = ANY($1::uuid[]) AND verification_id = ANY($2::uuid[])
   ORDER BY id FOR UPDATE`;

/**
 * CTE members (`name AS (…), …`) for the caller's erasure statement: each event's rewritten body
 * and `redacted_at`, and the response excerpts of its attempts dropped (a receiver may have echoed
 * the payload). An attempt recorded later, by a delivery that was in flight, keeps none either
 * (see the delivery store's record statement).
 */
export function redactEventsCte(events: { id: string; body: string; at: Date }[], params: SqlParams): string {
  const ids = params.add(events.map((event) => event.id));
  return `event_payload AS (
      UPDATE webhook_events e SET body = r.body, redacted_at = r.at
        FROM unnest(${ids}::uuid[], ${params.add(events.map((event) => event.body))}::text[],
                    ${params.add(events.map((event) => event.at))}::timestamptz[]) AS r(id, body, at)
       WHERE e.id = r.id),
    attempt_excerpt AS (
      UPDATE webhook_attempts SET response_body = NULL WHERE event_id = ANY(${ids}::uuid[]) AND response_body IS NOT NULL)`;
}
