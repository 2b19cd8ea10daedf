import type { SqlParams } from 'src/common/sql-params';
import { dropResponseExcerptsSql } from 'src/webhooks/tables/webhook-attempt.repository';
import { rewriteEventBodiesSql } from 'src/webhooks/tables/webhook-event.repository';

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

/**
 * CTE members (`name AS (…), …`) for the caller's erasure statement: each event's rewritten body
 * and `redacted_at`, and the response excerpts of its attempts dropped (a receiver may have echoed
 * the payload). An attempt recorded later, by a delivery that was in flight, keeps none either
 * (see the delivery store's record statement).
 */
export function redactEventsCte(events: { id: string; body: string; at: Date }[], params: SqlParams): string {
  const ids = params.add(events.map((event) => event.id));
  return `event_payload AS (
      ${rewriteEventBodiesSql(ids, events, params)}),
    attempt_excerpt AS (
      ${dropResponseExcerptsSql(ids)})`;
}
