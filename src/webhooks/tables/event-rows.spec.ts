import { buildOutboxEvent } from 'src/webhooks/outbox/outbox-event';
import { deliveryJobSource } from 'src/webhooks/tables/event-rows';

const ACCOUNT = '01936f7e-0000-7000-8000-000000000001';
const VERIFICATION = '01936f7e-0000-7000-8000-000000000002';
const URL = 'https://client.example/hooks';

describe('deliveryJobSource', () => {
  it('reads a status change as the outbox built it', () => {
    const change = {
      accountId: ACCOUNT,
      verificationId: VERIFICATION,
      previousStatus: 'processing',
      verification: { status: 'approved' },
    };
    const event = buildOutboxEvent(change, URL);
    expect(deliveryJobSource({ ...event, webhookUrl: URL })).toEqual({
      id: event.id,
      cycle: 1,
      type: 'verification.status_changed',
      accountId: ACCOUNT,
      verificationId: VERIFICATION,
      test: false,
      previousStatus: 'processing',
      status: 'approved',
      reason: null,
      webhookUrl: URL,
    });
  });

  it('reads a new verification, a test event and a redaction', () => {
    const created = { accountId: ACCOUNT, verificationId: VERIFICATION, previousStatus: null };
    const first = buildOutboxEvent({ ...created, verification: { status: 'pending' } }, URL);
    expect(deliveryJobSource({ ...first, webhookUrl: URL })).toMatchObject({ previousStatus: null, status: 'pending' });

    const test = buildOutboxEvent({ ...created, verification: { status: 'approved' }, test: true }, URL);
    expect(deliveryJobSource({ ...test, webhookUrl: URL })).toMatchObject({ test: true, status: 'approved' });

    const redaction = { accountId: ACCOUNT, verificationId: VERIFICATION, reason: 'retention' as const };
    const redacted = buildOutboxEvent({ ...redaction, verification: { status: 'rejected' } }, null);
    expect(deliveryJobSource({ ...redacted, webhookUrl: null })).toMatchObject({
      type: 'verification.redacted',
      previousStatus: null,
      status: 'rejected',
      reason: 'retention',
      webhookUrl: null,
    });
  });

  it('reads the fields a body lacks, or holds in another type, as null', () => {
    const row = {
      id: 'e',
      cycle: 3,
      type: 'verification.status_changed',
      accountId: ACCOUNT,
      verificationId: VERIFICATION,
    };
    expect(deliveryJobSource({ ...row, body: '{}', webhookUrl: URL })).toMatchObject({
      cycle: 3,
      test: false,
      previousStatus: null,
      status: null,
      reason: null,
    });
    const odd = JSON.stringify({ test: 'true', data: { previous_status: 7, verification: { status: ['approved'] } } });
    expect(deliveryJobSource({ ...row, body: odd, webhookUrl: URL })).toMatchObject({
      test: false,
      previousStatus: null,
      status: null,
    });
  });
});
