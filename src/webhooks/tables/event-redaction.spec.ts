import { type ErasedVerificationFields, redactEventBody } from 'src/webhooks/tables/event-redaction';

const ERASED_FIELDS: ErasedVerificationFields = {
  external_user_id: '[redacted]',
  applicant: null,
  document: null,
  metadata: {},
};

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
    const redacted = redactEventBody(body, ERASED_FIELDS, '2026-02-01T00:00:00.000Z');
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
    const once = redactEventBody(body, ERASED_FIELDS, '2026-02-01T00:00:00.000Z');
    expect(redactEventBody(once, ERASED_FIELDS, '2026-02-01T00:00:00.000Z')).toBe(once);
  });

  it('leaves a body that carries no verification unchanged', () => {
    expect(redactEventBody('{"id":"x","data":{}}', ERASED_FIELDS, '2026-02-01T00:00:00.000Z')).toBe(
      '{"id":"x","data":{}}',
    );
  });
});
