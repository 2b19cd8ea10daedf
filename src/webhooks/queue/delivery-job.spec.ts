import {
  attemptLogLine,
  deliveryJob,
  failureReason,
  formatDelay,
  FRESH_PRIORITY,
  laneOf,
  maintenanceSlots,
} from 'src/webhooks/queue/delivery-job';
import { type DeliveryJobSource } from 'src/webhooks/tables/event-rows';

const EVENT_ID = '0193a6f2-0000-7000-8000-000000000001';
const ACCOUNT_ID = '0193a6f2-0000-7000-8000-0000000000aa';
const VERIFICATION_ID = '0193a6f2-0000-7000-8000-0000000000bb';

const source: DeliveryJobSource = {
  id: EVENT_ID,
  cycle: 2,
  type: 'verification.status_changed',
  accountId: ACCOUNT_ID,
  verificationId: VERIFICATION_ID,
  test: false,
  previousStatus: 'processing',
  reason: null,
  status: 'approved',
  webhookUrl: 'https://hooks.client.example:8443/kyc?token=abc',
};

describe('deliveryJob', () => {
  it('names the job by the event type and labels it with ids and display strings only', () => {
    const job = deliveryJob(source);
    expect(job).toEqual({
      name: 'verification.status_changed',
      data: {
        eventId: EVENT_ID,
        cycle: 2,
        accountId: ACCOUNT_ID,
        verificationId: VERIFICATION_ID,
        change: 'processing → approved',
        target: 'hooks.client.example:8443',
      },
      opts: { jobId: `${EVENT_ID}:2` },
    });
    // The URL's path and query (which may carry a client's token) stay out of Redis.
    expect(JSON.stringify(job)).not.toContain('token');
  });

  it('gives a fresh job a priority, which Bull serves before every job without one', () => {
    expect(deliveryJob(source, 'fresh').opts).toEqual({ jobId: `${EVENT_ID}:2`, priority: FRESH_PRIORITY });
    expect(deliveryJob(source, 'maintenance').opts).toEqual({ jobId: `${EVENT_ID}:2` });
  });

  it("reads a queued job's lane back from its options", () => {
    expect(laneOf(deliveryJob(source, 'fresh').opts)).toBe('fresh');
    expect(laneOf(deliveryJob(source, 'maintenance').opts)).toBe('maintenance');
    expect(laneOf(undefined)).toBe('maintenance');
  });
});

describe('maintenanceSlots', () => {
  it("keeps a fifth of an account's slots, at least one, for its fresh changes", () => {
    expect([2, 3, 5, 9, 10, 11, 50, 10_000].map(maintenanceSlots)).toEqual([1, 2, 4, 8, 8, 9, 40, 8_000]);
  });

  it('keeps none back from a limit of one: one delivery at a time, in the order events were created', () => {
    expect(maintenanceSlots(1)).toBe(1);
  });

  it("names a test event's job `test`, without its made-up verification id", () => {
    const job = deliveryJob({ ...source, test: true, webhookUrl: null });
    expect(job.name).toBe('test');
    expect(job.data).not.toHaveProperty('verificationId');
    expect(job.data.target).toBe('no webhook_url');
  });

  it("names a redaction event's job by its type and shows its reason as the change", () => {
    const job = deliveryJob({ ...source, type: 'verification.redacted', previousStatus: null, reason: 'retention' });
    expect(job.name).toBe('verification.redacted');
    expect(job.data.change).toBe('redacted (retention)');
    expect(job.data.verificationId).toBe(VERIFICATION_ID);
  });
});

describe('job texts', () => {
  it.each([
    [825, '825 ms'],
    [5_000, '5s'],
    [59_400, '59s'],
    [300_000, '5m'],
    [1_800_000, '30m'],
    [7_200_000, '2h'],
    [9_000_000, '2h 30m'],
  ])('formats a delay of %i ms as %s', (ms, text) => {
    expect(formatDelay(ms)).toBe(text);
  });

  it('writes one log line per attempt', () => {
    const failed = { error: 'HTTP 500', responseStatus: 500, durationMs: 120.4 };
    expect(attemptLogLine(3, 8, failed, { kind: 'retry', delayMs: 1_800_000 })).toBe(
      'attempt 3/8 · HTTP 500 · 120 ms · next in 30m',
    );
    expect(
      attemptLogLine(8, 8, { ...failed, error: 'timeout: response', responseStatus: null }, { kind: 'failed' }),
    ).toBe('attempt 8/8 · timeout: response · 120 ms · gave up');
    expect(attemptLogLine(1, 8, { error: null, responseStatus: 204, durationMs: 9 }, { kind: 'delivered' })).toBe(
      'attempt 1/8 · HTTP 204 · 9 ms · delivered',
    );
  });

  it('says why a cycle is dead', () => {
    expect(failureReason({ cycleAttempts: 8, lastError: 'HTTP 500' })).toBe('gave up after 8 attempts: HTTP 500');
    expect(failureReason({ cycleAttempts: 0, lastError: 'no_webhook_url' })).toMatch(/^no webhook_url/);
  });
});
