import { iso } from 'src/common/time';
import type { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import type { Verification } from 'src/verifications/verification.entity';
import type {
  VerificationDetailResponseDto,
  VerificationResponseDto,
} from 'src/verifications/verification-response.dto';

// Type-only imports: the mapper loads no decorator library, so scripts and specs can run it as is.

/** The one place a verification becomes the contract's JSON (API responses and webhook payloads). */
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
    metadata: v.metadata,
    redacted_at: iso(v.redactedAt),
  };
}

export function toVerificationDetail(
  v: Verification,
  history: VerificationStatusHistory[],
): VerificationDetailResponseDto {
  return {
    ...toVerificationResponse(v),
    status_history: history.map((entry) => ({ status: entry.status, at: iso(entry.at), version: entry.version })),
  };
}
