import type { VerificationStatus } from 'src/verifications/verification.types';

const NEXT: Record<VerificationStatus, readonly VerificationStatus[]> = {
  pending: ['processing'],
  // back to pending when a retake is requested because the images were unusable
  processing: ['pending', 'approved', 'rejected'],
  approved: [],
  rejected: [],
};

export function canTransition(from: VerificationStatus, to: VerificationStatus): boolean {
  return NEXT[from].includes(to);
}

export function isTerminal(status: VerificationStatus): boolean {
  return NEXT[status].length === 0;
}

export interface TransitionTimestamps {
  submittedAt: Date | null;
  decidedAt: Date | null;
}

/** submitted_at: last entry into processing (a retake keeps it); decided_at: entry into a final status. */
export function timestampsAfter(to: VerificationStatus, before: TransitionTimestamps, at: Date): TransitionTimestamps {
  return {
    submittedAt: to === 'processing' ? at : before.submittedAt,
    decidedAt: isTerminal(to) ? at : null,
  };
}
