import { ApiError } from 'src/common/api-error';
import { canTransition, timestampsAfter } from 'src/verifications/verification-state-machine';
import { Verification } from 'src/verifications/verification.entity';
import type { Applicant, VerificationStatus } from 'src/verifications/verification.types';
import type { ApplicantDto, TransitionVerificationDto } from 'src/verifications/verifications.dto';

/** Fields the request gives replace the stored ones; null clears the applicant. */
export function mergeApplicant(current: Applicant | null, patch: ApplicantDto | null | undefined): Applicant | null {
  if (patch === undefined) return current;
  if (patch === null) return null;
  const base: Applicant = current ?? { first_name: null, last_name: null, date_of_birth: null, email: null };
  return {
    first_name: patch.first_name !== undefined ? patch.first_name : base.first_name,
    last_name: patch.last_name !== undefined ? patch.last_name : base.last_name,
    date_of_birth: patch.date_of_birth !== undefined ? patch.date_of_birth : base.date_of_birth,
    email: patch.email !== undefined ? patch.email : base.email,
  };
}

/** The refusals of a move, also the OpenAPI document's examples of the transitions route. */
export const TransitionRefusal = {
  versionConflict: (expected: number, current: number): ApiError =>
    new ApiError('version_conflict', `expected_version is ${expected} but the verification is at version ${current}`, [
      { field: 'expected_version', issue: `does not match the current version ${current}` },
    ]),
  redacted: (): ApiError =>
    new ApiError('invalid_transition', 'The verification was redacted: it takes no further move', [
      { field: 'status', issue: 'the verification was redacted' },
    ]),
  notAllowed: (from: VerificationStatus, to: VerificationStatus): ApiError =>
    new ApiError('invalid_transition', `Cannot move a verification from ${from} to ${to}`, [
      { field: 'status', issue: `cannot move from ${from} to ${to}` },
    ]),
  reasonsMissing: (): ApiError => ApiError.validation('rejection_reasons', 'must not be empty when status is rejected'),
  reasonsRefused: (): ApiError => ApiError.validation('rejection_reasons', 'must be empty unless status is rejected'),
};

/**
 * Refuses a move, in the contract's order: expected_version (409), a redacted verification and the
 * state machine (409), then the rejection-reason rules (400), which apply only to moves the state
 * machine allows.
 */
export function checkTransition(current: Verification, dto: TransitionVerificationDto): void {
  if (dto.expected_version !== undefined && dto.expected_version !== current.version) {
    throw TransitionRefusal.versionConflict(dto.expected_version, current.version);
  }
  if (current.redactedAt) throw TransitionRefusal.redacted();
  if (!canTransition(current.status, dto.status)) throw TransitionRefusal.notAllowed(current.status, dto.status);
  const reasons = dto.rejection_reasons ?? [];
  if (dto.status === 'rejected' && reasons.length === 0) throw TransitionRefusal.reasonsMissing();
  if (dto.status !== 'rejected' && reasons.length > 0) throw TransitionRefusal.reasonsRefused();
}

/** The verification after an allowed move; `updated_at` never goes backwards, even if the clock does. */
export function applyTransition(current: Verification, dto: TransitionVerificationDto, now: Date): Verification {
  const at = new Date(Math.max(now.getTime(), current.updatedAt.getTime()));
  const { submittedAt, decidedAt } = timestampsAfter(dto.status, current, at);
  return Object.assign(new Verification(), current, {
    status: dto.status,
    version: current.version + 1,
    updatedAt: at,
    submittedAt,
    decidedAt,
    rejectionReasons: dto.rejection_reasons ?? [],
    applicant: mergeApplicant(current.applicant, dto.applicant),
    document: dto.document ? { type: dto.document.type, country: dto.document.country } : current.document,
  });
}
