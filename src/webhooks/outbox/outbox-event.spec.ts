import { buildOutboxEvent, NO_WEBHOOK_URL } from 'src/webhooks/outbox/outbox-event';

const AT = new Date('2026-11-29T12:00:00.000Z');
const URL = 'https://hooks.client.example/kyc';
const base = {
  accountId: '0193a6f2-5d1a-7c4e-9a57-3f1f1e0b7c11',
  verificationId: '0193a6f2-5d1a-7c4e-9a57-3f1f1e0b7c12',
  verification: { status: 'approved' },
};

describe("an outbox event's first status", () => {
  it('is due at once for a status change, a redaction a client asked for, and a test event', () => {
    for (const change of [
      { ...base, previousStatus: 'processing' },
      { ...base, reason: 'client_request' as const },
      { ...base, previousStatus: null, test: true },
    ]) {
      const event = buildOutboxEvent(change, URL, AT);
      expect([event.deliveryStatus, event.nextAttemptAt]).toEqual(['pending', AT]);
    }
  });

  it("waits its turn (pending, no due time) for a retention pass's redaction", () => {
    const event = buildOutboxEvent({ ...base, reason: 'retention' }, URL, AT);
    expect([event.deliveryStatus, event.nextAttemptAt]).toEqual(['pending', null]);
  });

  it('is failed, with no due time, for an account without a webhook URL, whatever the change', () => {
    for (const change of [
      { ...base, previousStatus: 'processing' },
      { ...base, reason: 'retention' as const },
    ]) {
      const event = buildOutboxEvent(change, null, AT);
      expect([event.deliveryStatus, event.lastError, event.nextAttemptAt]).toEqual(['failed', NO_WEBHOOK_URL, null]);
    }
  });
});
