import { REDACTED_EXTERNAL_USER_ID, redactEventBody, redactVerification } from 'src/redaction/redacted-verification';
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

describe('redactEventBody', () => {
  const body = JSON.stringify({
    id: 'evt',
    type: 'verification.status_changed',
    timestamp: '2026-01-02T00:00:00.000Z',
    data: {
      previous_status: 'processing',
      verification: {
        id: 'v1',
        object: 'verification',
        external_user_id: 'user-ada',
        status: 'rejected',
        version: 3,
        updated_at: '2026-01-02T00:00:00.000Z',
        applicant: { first_name: 'Ada', last_name: 'Lovelace', date_of_birth: '1815-12-10', email: 'ada@example.com' },
        document: { type: 'passport', country: 'GB' },
        rejection_reasons: ['document_expired'],
        metadata: { plan: 'gold' },
      },
    },
  });

  it('erases the personal fields, sets redacted_at and keeps everything else in its order', () => {
    const redacted = redactEventBody(body, '2026-02-01T00:00:00.000Z');
    for (const value of ['user-ada', 'Ada', 'Lovelace', '1815-12-10', 'ada@example.com', 'passport', 'gold']) {
      expect(redacted).not.toContain(value);
    }
    const payload = JSON.parse(redacted);
    expect(payload).toEqual({
      id: 'evt',
      type: 'verification.status_changed',
      timestamp: '2026-01-02T00:00:00.000Z',
      data: {
        previous_status: 'processing',
        verification: {
          id: 'v1',
          object: 'verification',
          external_user_id: '[redacted]',
          status: 'rejected',
          version: 3,
          updated_at: '2026-01-02T00:00:00.000Z',
          applicant: null,
          document: null,
          rejection_reasons: ['document_expired'],
          metadata: {},
          redacted_at: '2026-02-01T00:00:00.000Z',
        },
      },
    });
    expect(Object.keys(payload.data.verification)).toEqual([
      ...Object.keys(JSON.parse(body).data.verification),
      'redacted_at',
    ]);
  });

  it('is idempotent', () => {
    const once = redactEventBody(body, '2026-02-01T00:00:00.000Z');
    expect(redactEventBody(once, '2026-02-01T00:00:00.000Z')).toBe(once);
  });

  it('leaves a body that carries no verification unchanged', () => {
    expect(redactEventBody('{"id":"x","data":{}}', '2026-02-01T00:00:00.000Z')).toBe('{"id":"x","data":{}}');
  });
});
