import { iso } from 'src/common/time';
import type { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import type { Verification } from 'src/verifications/verification.entity';
import type {
  StatusHistoryEntryDto,
  VerificationDetailResponseDto,
  VerificationResponseDto,
} from 'src/verifications/verification-response.dto';

// Type-only imports: the mapper loads no decorator library, so scripts, specs and migrations can run it as is.

/** jsonb's key order: byte length, then bytes. */
function jsonbKeyOrder(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length - y.length || Buffer.compare(x, y);
}

/**
 * The metadata map with its keys in one order whatever order they arrived in: jsonb's, which is the
 * order every read of the column gives (JS still lists integer-like keys such as "10" first). So the
 * text stored at create equals the text rendered from the row read back, byte for byte.
 */
function inStoredKeyOrder(metadata: Record<string, string>): Record<string, string> {
  const keys = Object.keys(metadata);
  const sorted = [...keys].sort(jsonbKeyOrder);
  if (sorted.every((key, i) => key === keys[i])) return metadata;
  return Object.fromEntries(sorted.map((key) => [key, metadata[key] as string]));
}

/** The one place a verification becomes the contract's JSON (API responses, webhook payloads, the stored text). */
export function toVerificationResponse(v: Verification): VerificationResponseDto {
  return {
    id: v.id,
    object: 'verification',
    external_user_id: v.externalUserId,
    status: v.status,
    version: v.version,
    created_at: iso(v.createdAt),
    updated_at: iso(v.updatedAt),
    submitted_at: iso(v.submittedAt),
    decided_at: iso(v.decidedAt),
    applicant: v.applicant && {
      first_name: v.applicant.first_name ?? null,
      last_name: v.applicant.last_name ?? null,
      date_of_birth: v.applicant.date_of_birth ?? null,
      email: v.applicant.email ?? null,
    },
    document: v.document && { type: v.document.type, country: v.document.country },
    rejection_reasons: v.rejectionReasons,
    metadata: inStoredKeyOrder(v.metadata),
    redacted_at: iso(v.redactedAt),
  };
}

/**
 * The verification's contract JSON text, as `verifications.response_json` stores it: written with
 * every change of the row (create, status change, redaction) in the statement that makes it, so
 * the list and detail routes send stored text and render nothing.
 */
export function verificationJson(v: Verification): string {
  return JSON.stringify(toVerificationResponse(v));
}

function toStatusHistory(history: VerificationStatusHistory[]): StatusHistoryEntryDto[] {
  return history.map((entry) => ({ status: entry.status, at: iso(entry.at), version: entry.version }));
}

export function toVerificationDetail(
  v: Verification,
  history: VerificationStatusHistory[],
): VerificationDetailResponseDto {
  return { ...toVerificationResponse(v), status_history: toStatusHistory(history) };
}

/** toVerificationDetail's text from the verification's stored text: status_history is its last field. */
export function verificationDetailJson(json: string, history: VerificationStatusHistory[]): string {
  return `${json.slice(0, -1)},"status_history":${JSON.stringify(toStatusHistory(history))}}`;
}
