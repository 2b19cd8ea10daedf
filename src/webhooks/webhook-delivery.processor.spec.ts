import type { Job } from 'bull';
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { DeliveryRetry } from 'src/webhooks/delivery-retry';
import type { AttemptRecord, DueEvent } from 'src/webhooks/delivery-store';
import {
  type DeliverySlots,
  type DeliveryStorePort,
  WebhookDeliveryProcessor,
  type WebhookPoster,
} from 'src/webhooks/webhook-delivery.processor';
import type { DeliveryResult } from 'src/webhooks/webhook-http.client';
import type { DeliveryJobData } from 'src/webhooks/webhook-queue.constants';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SCHEDULE = [5_000, 300_000];
const config = { webhookRetryScheduleMs: SCHEDULE };

function dueEvent(overrides: Partial<DueEvent> = {}): DueEvent {
  return {
    id: '0193a6f2-0000-7000-8000-000000000001',
    accountId: '0193a6f2-0000-7000-8000-0000000000aa',
    body: '{"id":"0193a6f2-0000-7000-8000-000000000001","type":"verification.status_changed"}',
    createdAt: new Date(Date.now() - 1_000),
    deliveryStatus: 'pending',
    cycle: 1,
    cycleAttempts: 0,
    nextAttemptAt: new Date(),
    webhookUrl: 'https://client.example/hook',
    secretCiphertexts: ['ciphertext-1'],
    ...overrides,
  };
}

function response(status: number | null, error: string | null, retryAfter?: string): DeliveryResult {
  return { responseStatus: status, error, responseBody: error ? 'nope' : 'ok', durationMs: 12, retryAfter };
}

/** In-memory stand-ins for the processor's seams: the event store, the HTTP poster, the account slots. */
class Fakes {
  event: DueEvent | undefined = dueEvent();
  records: AttemptRecord[] = [];
  persistentRecords: AttemptRecord[] = [];
  failedWithoutUrl: string[] = [];
  recordAnswer = true;
  posts: { url: string; headers: Record<string, string>; body: string }[] = [];
  postAnswer: DeliveryResult = response(204, null);
  slotFree = true;
  held = new Set<string>();

  readonly store: DeliveryStorePort = {
    load: async () => this.event,
    record: async (attempt) => (this.records.push(attempt), this.recordAnswer),
    recordUntilStored: async (attempt) => (this.persistentRecords.push(attempt), this.recordAnswer),
    signingSecrets: (event) => event.secretCiphertexts.map(() => SECRET),
    failWithoutUrl: async (event) => void this.failedWithoutUrl.push(event.id),
  };
  readonly http: WebhookPoster = {
    post: async (url, headers, body) => (this.posts.push({ url, headers, body }), this.postAnswer),
  };
  readonly slots: DeliverySlots = {
    acquire: async (_account, member) => this.slotFree && (this.held.add(member), true),
    release: async (_account, member) => void this.held.delete(member),
  };

  processor(): WebhookDeliveryProcessor {
    return new WebhookDeliveryProcessor(config, this.store, this.http, this.slots, { warn: () => undefined });
  }
}

function job(data: Partial<DeliveryJobData> = {}, attemptsMade = 0): Job<DeliveryJobData> {
  return {
    id: 'job-1',
    data: { eventId: '0193a6f2-0000-7000-8000-000000000001', cycle: 1, ...data },
    attemptsMade,
  } as Job<DeliveryJobData>;
}

describe('WebhookDeliveryProcessor', () => {
  let fakes: Fakes;
  beforeEach(() => (fakes = new Fakes()));

  it('POSTs the frozen body, signed, and records a delivery persistently', async () => {
    await expect(fakes.processor().process(job())).resolves.toBe('delivered');
    expect(fakes.posts).toHaveLength(1);
    const [post] = fakes.posts;
    expect(post.url).toBe('https://client.example/hook');
    expect(post.body).toBe(dueEvent().body);
    expect(() => new Webhook(SECRET).verify(post.body, post.headers)).not.toThrow();
    expect(fakes.records).toEqual([]);
    expect(fakes.persistentRecords).toEqual([
      expect.objectContaining({
        eventId: dueEvent().id,
        cycle: 1,
        status: 'delivered',
        responseStatus: 204,
        error: null,
        nextAttemptAt: null,
        durationMs: 12,
      }),
    ]);
    expect(fakes.held.size).toBe(0);
  });

  it('records a failed attempt as pending with its next attempt, and hands Bull the delay', async () => {
    fakes.postAnswer = response(500, 'HTTP 500');
    const before = Date.now();
    const error = await fakes
      .processor()
      .process(job())
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(DeliveryRetry);
    const delay = (error as DeliveryRetry).delayMs;
    expect(delay).toBeGreaterThanOrEqual(4_000);
    expect(delay).toBeLessThanOrEqual(6_000);
    expect(fakes.records).toEqual([
      expect.objectContaining({ status: 'pending', responseStatus: 500, error: 'HTTP 500', responseBody: 'nope' }),
    ]);
    const next = fakes.records[0].nextAttemptAt?.getTime() ?? 0;
    expect(next - before).toBeGreaterThanOrEqual(delay);
    expect(fakes.held.size).toBe(0);
  });

  it('marks the event failed after the last scheduled attempt and ends the job', async () => {
    fakes.event = dueEvent({ cycleAttempts: SCHEDULE.length });
    fakes.postAnswer = response(null, 'timeout');
    await expect(fakes.processor().process(job())).resolves.toBe('failed');
    expect(fakes.records).toEqual([
      expect.objectContaining({ status: 'failed', responseStatus: null, error: 'timeout', nextAttemptAt: null }),
    ]);
  });

  it('fails an event of an account without a webhook URL with no attempt', async () => {
    fakes.event = dueEvent({ webhookUrl: null });
    await expect(fakes.processor().process(job())).resolves.toBe('no_webhook_url');
    expect(fakes.failedWithoutUrl).toEqual([dueEvent().id]);
    expect(fakes.posts).toEqual([]);
  });

  it.each([
    ['gone', undefined, {}],
    ['no longer pending', dueEvent({ deliveryStatus: 'delivered' }), {}],
    ['of an older cycle', dueEvent({ cycle: 2 }), { cycle: 1 }],
  ])('skips an event that is %s, sending nothing', async (_what, event, data) => {
    fakes.event = event;
    await expect(fakes.processor().process(job(data))).resolves.toBe('skipped');
    expect(fakes.posts).toEqual([]);
    expect(fakes.records).toEqual([]);
  });

  it('waits, without an attempt, when picked up well before the event is due', async () => {
    fakes.event = dueEvent({ nextAttemptAt: new Date(Date.now() + 60_000) });
    const error = await fakes
      .processor()
      .process(job())
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(DeliveryRetry);
    expect((error as DeliveryRetry).delayMs).toBeGreaterThan(55_000);
    expect(fakes.posts).toEqual([]);
  });

  it('defers, without an attempt, while the account has the most deliveries in flight', async () => {
    fakes.slotFree = false;
    const error = await fakes
      .processor()
      .process(job({}, 3))
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(DeliveryRetry);
    expect((error as DeliveryRetry).message).toMatch(/deferred/);
    expect(fakes.posts).toEqual([]);
  });

  it('reports skipped, and does not retry, when the event moved on before its attempt was recorded', async () => {
    fakes.recordAnswer = false;
    fakes.postAnswer = response(500, 'HTTP 500');
    await expect(fakes.processor().process(job())).resolves.toBe('skipped');
  });

  it('frees the account slot even when recording throws', async () => {
    fakes.store.record = async () => {
      throw new Error('database down');
    };
    fakes.postAnswer = response(502, 'HTTP 502');
    await expect(fakes.processor().process(job())).rejects.toThrow('database down');
    expect(fakes.held.size).toBe(0);
  });
});
