export const VERIFICATION_STATUSES = ['pending', 'processing', 'approved', 'rejected'] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

export const DOCUMENT_TYPES = ['passport', 'id_card', 'driving_license', 'residence_permit'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export const REJECTION_REASONS = [
  'document_unreadable',
  'document_expired',
  'document_unsupported',
  'face_mismatch',
  'liveness_failed',
  'data_mismatch',
  'suspected_fraud',
  'underage',
  'other',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface Applicant {
  first_name: string | null;
  last_name: string | null;
  date_of_birth: string | null;
  email: string | null;
}

export interface VerificationDocument {
  type: DocumentType;
  country: string;
}
