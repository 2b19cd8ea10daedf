import { v7 as uuidv7 } from 'uuid';

/** Verification statuses, repeated here so the webhooks feature does not reach into verifications. */
export const TEST_EVENT_STATUSES = ['pending', 'processing', 'approved', 'rejected'] as const;
export type TestEventStatus = (typeof TEST_EVENT_STATUSES)[number];

const PREVIOUS: Record<TestEventStatus, TestEventStatus> = {
  pending: 'processing',
  processing: 'pending',
  approved: 'processing',
  rejected: 'processing',
};

export interface TestVerification {
  id: string;
  previousStatus: TestEventStatus;
  /** In the contract's verification JSON shape. */
  verification: Record<string, unknown>;
}

/** A made-up verification in the given status, as a real change to that status would carry it. */
export function testVerification(status: TestEventStatus, at: Date): TestVerification {
  const id = uuidv7();
  const now = at.toISOString();
  const created = new Date(at.getTime() - 60_000).toISOString();
  const submitted = new Date(at.getTime() - 30_000).toISOString();
  const decided = status === 'approved' || status === 'rejected';
  return {
    id,
    previousStatus: PREVIOUS[status],
    verification: {
      id,
      object: 'verification',
      external_user_id: 'test_user',
      status,
      version: status === 'processing' ? 2 : 3,
      created_at: created,
      updated_at: now,
      submitted_at: submitted,
      decided_at: decided ? now : null,
      applicant: { first_name: 'Test', last_name: 'User', date_of_birth: '1990-01-01', email: 'test_user@example.com' },
      document: status === 'pending' ? null : { type: 'passport', country: 'GB' },
      rejection_reasons: status === 'rejected' ? ['document_expired'] : [],
      metadata: {},
      redacted_at: null,
    },
  };
}
