import { Verification } from 'src/verifications/verification.entity';
import type { ErasedVerificationFields } from 'src/webhooks/tables/event-redaction';

/** What `external_user_id` becomes: the contract's marker, the same for every redacted verification. */
export const REDACTED_EXTERNAL_USER_ID = '[redacted]';

/** The personal fields of the contract JSON as a redaction leaves them (for the stored webhook payloads). */
export const ERASED_FIELDS: ErasedVerificationFields = {
  external_user_id: REDACTED_EXTERNAL_USER_ID,
  applicant: null,
  document: null,
  metadata: {},
};

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
