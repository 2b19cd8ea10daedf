import { REDACTED_EXTERNAL_USER_ID, redactVerification } from 'src/verifications/redacted-verification';
import { Verification } from 'src/verifications/verification.entity';

function verification(overrides: Partial<Verification> = {}): Verification {
  return Object.assign(new Verification(), {
    id: '0193a6f2-0000-7000-8000-000000000001',
    accountId: '0193a6f2-0000-7000-8000-0000000000aa',
    externalUserId: 'user-ada',
    status: 'rejected',
    version: 3,
    createdAt: new Date('2026-01-01T00:00:00.000Z'),
    updatedAt: new Date('2026-01-02T00:00:00.000Z'),
    submittedAt: new Date('2026-01-01T12:00:00.000Z'),
    decidedAt: new Date('2026-01-02T00:00:00.000Z'),
    applicant: { first_name: 'Ada', last_name: 'Lovelace', date_of_birth: '1815-12-10', email: 'ada@example.com' },
    document: { type: 'passport', country: 'GB' },
    rejectionReasons: ['document_expired'],
    metadata: { plan: 'gold' },
    redactedAt: null,
    ...overrides,
  } satisfies Verification);
}

describe('redactVerification', () => {
  it('erases the personal fields and keeps the decision record', () => {
    const now = new Date('2026-02-01T00:00:00.000Z');
    const current = verification();
    const redacted = redactVerification(current, now);
    expect(redacted).toEqual({
      ...current,
      externalUserId: REDACTED_EXTERNAL_USER_ID,
      applicant: null,
      document: null,
      metadata: {},
      redactedAt: now,
      updatedAt: now,
    });
    expect(current.applicant).not.toBeNull();
  });

  it('never moves updated_at backwards when the clock does', () => {
    const current = verification({ updatedAt: new Date('2026-03-01T00:00:00.000Z') });
    const redacted = redactVerification(current, new Date('2026-02-01T00:00:00.000Z'));
    expect(redacted.updatedAt).toEqual(current.updatedAt);
    expect(redacted.redactedAt).toEqual(current.updatedAt);
  });
});
