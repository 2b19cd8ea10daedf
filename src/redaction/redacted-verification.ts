import { Verification } from 'src/verifications/verification.entity';

/** What `external_user_id` becomes: the contract's marker, the same for every redacted verification. */
export const REDACTED_EXTERNAL_USER_ID = '[redacted]';

/**
 * The verification with its personal data erased: applicant, document, metadata and the client's
 * user id. Id, status, version, the decision's timestamps and rejection reasons stay: they are the
 * decision record. `updated_at` moves to the redaction (never backwards, even if the clock does).
 */
export function redactVerification(current: Verification, now: Date): Verification {
  const at = new Date(Math.max(now.getTime(), current.updatedAt.getTime()));
  return Object.assign(new Verification(), current, {
    externalUserId: REDACTED_EXTERNAL_USER_ID,
    applicant: null,
    document: null,
    metadata: {},
    redactedAt: at,
    updatedAt: at,
  } satisfies Partial<Verification>);
}

/** The personal fields of a verification in its contract JSON, as a redaction leaves them. */
const ERASED = { external_user_id: REDACTED_EXTERNAL_USER_ID, applicant: null, document: null, metadata: {} };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A stored webhook body with its verification's personal fields erased and `redacted_at` set; ids,
 * type, timestamp, status and version stay as they were at that event's change, and so does the
 * order of the keys (the body is re-signed at its next attempt, never compared). A body that is not
 * an event about a verification is returned unchanged.
 */
export function redactEventBody(body: string, redactedAt: string): string {
  const payload: unknown = JSON.parse(body);
  if (!isObject(payload) || !isObject(payload.data) || !isObject(payload.data.verification)) return body;
  const verification = payload.data.verification;
  for (const [field, value] of Object.entries(ERASED)) {
    if (field in verification) verification[field] = value;
  }
  verification.redacted_at = redactedAt;
  return JSON.stringify(payload);
}
