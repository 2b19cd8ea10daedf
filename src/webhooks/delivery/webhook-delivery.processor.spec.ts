import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { SecretKeyError } from 'src/accounts/secret-crypto';
import { type Acquired, BEHIND_MAINTENANCE } from 'src/webhooks/delivery/account-concurrency';
import { type DeliveryJobData, FRESH_PRIORITY, type Lane } from 'src/webhooks/queue/delivery-job';
import { DeliveryGaveUp, DeliveryRetry, retryBackoff } from 'src/webhooks/queue/delivery-retry';
import type { AttemptRecord, DueEvent, RecordResult } from 'src/webhooks/delivery/delivery-store';
import type {
  DeliveryJobHandle,
  DeliverySlots,
  DeliveryStorePort,
  EndpointPort,
  PreviousCycles,
  WebhookPoster,
} from 'src/webhooks/delivery/delivery-ports';
import { WebhookDeliveryProcessor } from 'src/webhooks/delivery/webhook-delivery.processor';
import { SIGNING_KEY_ERROR } from 'src/webhooks/delivery/delivery-attempt';
import type { DeliveryResult } from 'src/webhooks/delivery/webhook-http.client';
import { type FailedReason, webhookEventsFailed } from 'src/webhooks/queue/webhook-metrics';
import type { EntityManager } from 'typeorm';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const SCHEDULE = [5_000, 300_000];
const DISABLE_AFTER_MS = 3_600_000;
const config = { webhookRetryScheduleMs: SCHEDULE, webhookDisableAfterMs: DISABLE_AFTER_MS };

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
    lastError: null,
    webhookUrl: 'https://client.example/hook',
    secretCiphertexts: ['ciphertext-1'],
    disabledAt: null,
    waiting: false,
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
  /** What a record answers: written (true), written with the event held (its endpoint disabled meanwhile), or not. */
  recordAnswer: RecordResult = true;
  /** Whether the account had left the attempt's url when its 410 was recorded. */
  movedAnswer = false;
  posts: { url: string; headers: Record<string, string>; body: string }[] = [];
  postAnswer: DeliveryResult = response(204, null);
  slotFree = true;
  /** What hasRoom answers: whether the account has a slot free now. */
  roomNow = true;
  /** What a release answers: whether a delivery of the account was refused a slot lately. */
  othersWaiting = false;
  parkAnswer = true;
  parked: string[] = [];
  held = new Set<string>();
  lanes: Lane[] = [];
  /** What acquire answers instead of slotFree's true or false. */
  slotAnswer?: Acquired;
  retired: string[] = [];
  /** The job's log, as the dashboard's Logs tab shows it. */
  log: string[] = [];
  /** What signingSecrets throws, when set: SECRET_ENCRYPTION_KEY cannot open the secret. */
  keyError: Error | undefined;
  warnings: string[] = [];
  /** The endpoint's failing_since as the store reads it after a record. */
  failingSince: Date | null = null;
  /** What the store's hold answers: whether the endpoint was still disabled. */
  holdAnswer = true;
  holds: string[] = [];
  /** Attempts recorded in the transaction that disables the endpoint. */
  recordsInDisable: AttemptRecord[] = [];
  disables: { accountId: string; reason: string }[] = [];
  advances: string[] = [];
  /** Whether each advance asked for a retry of an account passed over. */
  retries: boolean[] = [];

  readonly store: DeliveryStorePort = {
    load: async () => this.event,
    record: async (attempt) => (this.records.push(attempt), this.recordAnswer),
    recordUntilStored: async (attempt) => (this.persistentRecords.push(attempt), this.recordAnswer),
    signingSecrets: (event) => {
      if (this.keyError) throw this.keyError;
      return event.secretCiphertexts.map(() => SECRET);
    },
    failWithoutUrl: async (event) => void this.failedWithoutUrl.push(event.id),
    recordIn: async (_manager, attempt) => (
      this.recordsInDisable.push(attempt),
      { recorded: this.recordAnswer !== false, moved: this.movedAnswer }
    ),
    failingSince: async () => this.failingSince,
    hold: async (event) => (this.holds.push(event.id), this.holdAnswer),
    park: async (event) => (this.parked.push(event.id), this.parkAnswer),
  };
  readonly endpoints: EndpointPort = {
    disable: async (accountId, reason, work) => {
      if (work && (await work({} as EntityManager, { disabledReason: null, disabledAt: null })) === false) return false;
      this.disables.push({ accountId, reason });
      return true;
    },
    advanceIfFree: async (accountIds, retry = true) =>
      void (this.advances.push(...accountIds), this.retries.push(retry)),
  };
  readonly http: WebhookPoster = {
    post: async (url, headers, body) => (this.posts.push({ url, headers, body }), this.postAnswer),
  };
  readonly slots: DeliverySlots = {
    acquire: async (_account, member, lane) => (
      this.lanes.push(lane),
      this.slotAnswer ?? (this.slotFree && (this.held.add(member), true))
    ),
    release: async (_account, member) => (this.held.delete(member), this.othersWaiting),
    hasRoom: async () => this.roomNow,
  };

  readonly previousCycles: PreviousCycles = {
    retirePreviousCycle: async (eventId, cycle) => void this.retired.push(`${eventId}:${cycle - 1}`),
  };

  processor(): WebhookDeliveryProcessor {
    return new WebhookDeliveryProcessor(
      config,
      this.store,
      this.http,
      this.slots,
      this.previousCycles,
      this.endpoints,
      {
        warn: (line: string) => void this.warnings.push(line),
      },
    );
  }

  job(data: Partial<DeliveryJobData> = {}, attemptsMade = 0, priority?: number): DeliveryJobHandle {
    return {
      id: 'job-1',
      data: { eventId: '0193a6f2-0000-7000-8000-000000000001', cycle: 1, ...data },
      opts: priority === undefined ? {} : { priority },
      attemptsMade,
      log: async (line: string) => (this.log.push(line), 0),
    } as DeliveryJobHandle;
  }
}

/** webhook_events_failed_total{reason} as /metrics would show it now. */
async function failedCount(reason: FailedReason): Promise<number> {
  return (await webhookEventsFailed.get()).values.find((sample) => sample.labels.reason === reason)?.value ?? 0;
}

/** What the processor threw, for the specs of a job that does not complete. */
async function thrownBy(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected the job to throw, it completed with ${String(value)}`);
    },
    (thrown: unknown) => thrown,
  );
}

describe('WebhookDeliveryProcessor', () => {
  let fakes: Fakes;
  beforeEach(() => (fakes = new Fakes()));

  it('POSTs the frozen body, signed, and records a delivery persistently', async () => {
    await expect(fakes.processor().process(fakes.job())).resolves.toBe('delivered');
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
    const error = await thrownBy(fakes.processor().process(fakes.job()));
    expect(error).toBeInstanceOf(DeliveryRetry);
    const delay = (error as DeliveryRetry).delayMs;
    expect(delay).toBeGreaterThanOrEqual(4_000);
    expect(delay).toBeLessThanOrEqual(6_000);
    expect(fakes.records).toEqual([
      expect.objectContaining({ status: 'pending', responseStatus: 500, error: 'HTTP 500', responseBody: 'nope' }),
    ]);
    expect((error as DeliveryRetry).message).toMatch(/^HTTP 500 \(attempt 1\/3; next in [4-6]s\)$/);
    expect(fakes.log).toEqual([expect.stringMatching(/^attempt 1\/3 · HTTP 500 · 12 ms · next in [4-6]s$/)]);
    const next = fakes.records[0].nextAttemptAt?.getTime() ?? 0;
    expect(next - before).toBeGreaterThanOrEqual(delay);
    expect(fakes.held.size).toBe(0);
  });

  it('records a secret SECRET_ENCRYPTION_KEY cannot open as a failed attempt, sends nothing, and retries on the schedule', async () => {
    fakes.keyError = new SecretKeyError('does not hold key AbCdEfGhIjK, which sealed this secret');
    const error = await thrownBy(fakes.processor().process(fakes.job()));
    expect(error).toBeInstanceOf(DeliveryRetry);
    expect(fakes.posts).toEqual([]);
    expect(fakes.records).toEqual([
      expect.objectContaining({ status: 'pending', responseStatus: null, error: SIGNING_KEY_ERROR }),
    ]);
    expect(fakes.log).toEqual([
      expect.stringMatching(/^attempt 1\/3 · signing secret cannot be decrypted \(SECRET_ENCRYPTION_KEY\) · /),
    ]);
    expect(fakes.warnings).toEqual([
      `event ${dueEvent().id} of account ${dueEvent().accountId} not sent: its signing secret: SECRET_ENCRYPTION_KEY does not hold key AbCdEfGhIjK, which sealed this secret`,
    ]);

    fakes.event = dueEvent({ cycleAttempts: SCHEDULE.length });
    const last = await thrownBy(fakes.processor().process(fakes.job()));
    expect(last).toBeInstanceOf(DeliveryGaveUp);
    expect((last as Error).message).toBe(`gave up after 3 attempts: ${SIGNING_KEY_ERROR}`);
  });

  it('lets any other error of the store through', async () => {
    fakes.keyError = new Error('boom');
    await expect(fakes.processor().process(fakes.job())).rejects.toThrow('boom');
    expect(fakes.records).toEqual([]);
  });

  it('logs a delivery on the job', async () => {
    await fakes.processor().process(fakes.job());
    expect(fakes.log).toEqual(['attempt 1/3 · HTTP 204 · 12 ms · delivered']);
  });

  it('marks the event failed after the last scheduled attempt and fails the job for good, saying why', async () => {
    fakes.event = dueEvent({ cycleAttempts: SCHEDULE.length });
    fakes.postAnswer = response(null, 'timeout: response');
    const error = await thrownBy(fakes.processor().process(fakes.job()));
    expect(error).toBeInstanceOf(DeliveryGaveUp);
    expect((error as Error).message).toBe('gave up after 3 attempts: timeout: response');
    expect(retryBackoff(3, error as Error)).toBe(-1);
    expect(fakes.records).toEqual([
      expect.objectContaining({
        status: 'failed',
        responseStatus: null,
        error: 'timeout: response',
        nextAttemptAt: null,
      }),
    ]);
    expect(fakes.log).toEqual(['attempt 3/3 · timeout: response · 12 ms · gave up']);
  });

  it('fails an event of an account without a webhook URL with no attempt, and fails its job', async () => {
    fakes.event = dueEvent({ webhookUrl: null });
    const error = await thrownBy(fakes.processor().process(fakes.job()));
    expect(error).toBeInstanceOf(DeliveryGaveUp);
    expect((error as Error).message).toMatch(/^no webhook_url/);
    expect(fakes.failedWithoutUrl).toEqual([dueEvent().id]);
    expect(fakes.posts).toEqual([]);
    expect(fakes.log).toEqual([(error as Error).message]);
  });

  it.each([
    ['gone', undefined, {}],
    ['of an older cycle', dueEvent({ cycle: 2 }), { cycle: 1 }],
  ])('skips an event that is %s, sending nothing', async (_what, event, data) => {
    fakes.event = event;
    await expect(fakes.processor().process(fakes.job(data))).resolves.toBe('skipped');
    expect(fakes.posts).toEqual([]);
    expect(fakes.records).toEqual([]);
  });

  it('ends a job run again after its cycle ended as the event row did, sending nothing', async () => {
    fakes.event = dueEvent({ deliveryStatus: 'delivered' });
    await expect(fakes.processor().process(fakes.job())).resolves.toBe('delivered');
    fakes.event = dueEvent({ deliveryStatus: 'failed', cycleAttempts: 3, lastError: 'HTTP 500' });
    const error = await thrownBy(fakes.processor().process(fakes.job()));
    expect(error).toBeInstanceOf(DeliveryGaveUp);
    expect((error as Error).message).toBe('gave up after 3 attempts: HTTP 500');
    fakes.event = dueEvent({ deliveryStatus: 'failed', cycleAttempts: 0, lastError: 'no_webhook_url' });
    expect(((await thrownBy(fakes.processor().process(fakes.job()))) as Error).message).toMatch(/^no webhook_url/);
    expect(fakes.posts).toEqual([]);
    expect(fakes.records).toEqual([]);
  });

  describe('webhook_events_failed_total', () => {
    it('counts a cycle that used up its schedule once (schedule_exhausted), and not its retries', async () => {
      fakes.postAnswer = response(500, 'HTTP 500');
      const before = await failedCount('schedule_exhausted');
      await thrownBy(fakes.processor().process(fakes.job()));
      expect(await failedCount('schedule_exhausted')).toBe(before);
      fakes.event = dueEvent({ cycleAttempts: SCHEDULE.length });
      await thrownBy(fakes.processor().process(fakes.job()));
      expect(await failedCount('schedule_exhausted')).toBe(before + 1);
      // The same job run again once the row says failed: already counted.
      fakes.event = dueEvent({ deliveryStatus: 'failed', cycleAttempts: SCHEDULE.length + 1, lastError: 'HTTP 500' });
      await thrownBy(fakes.processor().process(fakes.job()));
      expect(await failedCount('schedule_exhausted')).toBe(before + 1);
    });

    it('counts a cycle with no webhook URL (no_webhook_url): the URL gone before the attempt, or none at creation', async () => {
      const before = await failedCount('no_webhook_url');
      fakes.event = dueEvent({ webhookUrl: null });
      await thrownBy(fakes.processor().process(fakes.job()));
      expect(await failedCount('no_webhook_url')).toBe(before + 1);
      fakes.event = dueEvent({
        deliveryStatus: 'failed',
        cycleAttempts: 0,
        lastError: 'no_webhook_url',
        webhookUrl: null,
      });
      await thrownBy(fakes.processor().process(fakes.job()));
      expect(await failedCount('no_webhook_url')).toBe(before + 2);
    });

    it('does not count a delivery, a retry, a hold or a skip', async () => {
      const before = [await failedCount('schedule_exhausted'), await failedCount('no_webhook_url')];
      await fakes.processor().process(fakes.job());
      fakes.postAnswer = response(500, 'HTTP 500');
      await thrownBy(fakes.processor().process(fakes.job()));
      fakes.postAnswer = response(410, 'HTTP 410 (endpoint gone)');
      await fakes.processor().process(fakes.job());
      fakes.event = undefined;
      await fakes.processor().process(fakes.job());
      expect([await failedCount('schedule_exhausted'), await failedCount('no_webhook_url')]).toEqual(before);
    });
  });

  it("retires the previous cycle's job when a redelivery's first attempt starts, not later", async () => {
    fakes.event = dueEvent({ cycle: 2 });
    await fakes.processor().process(fakes.job({ cycle: 2 }));
    expect(fakes.retired).toEqual([`${dueEvent().id}:1`]);
    fakes.event = dueEvent({ cycle: 2, cycleAttempts: 1 });
    await fakes.processor().process(fakes.job({ cycle: 2 }));
    expect(fakes.retired).toHaveLength(1);
  });

  it('waits, without an attempt, when picked up well before the event is due', async () => {
    fakes.event = dueEvent({ nextAttemptAt: new Date(Date.now() + 60_000) });
    const error = await fakes
      .processor()
      .process(fakes.job())
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(DeliveryRetry);
    expect((error as DeliveryRetry).delayMs).toBeGreaterThan(55_000);
    expect(fakes.posts).toEqual([]);
  });

  it('parks the event, without an attempt, while the account has the most deliveries in flight; the job completes', async () => {
    fakes.slotFree = false;
    await expect(fakes.processor().process(fakes.job({}, 3))).resolves.toBe('waiting its turn');
    expect(fakes.parked).toEqual([fakes.event?.id]);
    expect(fakes.log).toEqual(['waiting its turn: the account has the most deliveries in flight']);
    expect(fakes.posts).toEqual([]);
    // The event moved on meanwhile (delivered by a job of an earlier turn, redelivered): nothing to park.
    fakes.parkAnswer = false;
    await expect(fakes.processor().process(fakes.job())).resolves.toBe('skipped');
  });

  it('asks for a slot in the lane its job went in by, so that maintenance never takes the slots kept for fresh changes', async () => {
    await fakes.processor().process(fakes.job({}, 0, FRESH_PRIORITY));
    await fakes.processor().process(fakes.job({ cycle: 1 }));
    expect(fakes.lanes).toEqual(['fresh', 'maintenance']);
  });

  it('tries a fresh change again in 250 ms, not parked, when maintenance deliveries hold the slots it was refused', async () => {
    fakes.slotAnswer = BEHIND_MAINTENANCE;
    const error = await fakes
      .processor()
      .process(fakes.job({}, 0, FRESH_PRIORITY))
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(DeliveryRetry);
    expect((error as DeliveryRetry).delayMs).toBe(250);
    expect(fakes.parked).toEqual([]);
    expect(fakes.posts).toEqual([]);
  });

  it('after a parked job completed, lets the next events through only if a slot is free now', async () => {
    const processor = fakes.processor();
    fakes.roomNow = false;
    await processor.afterWaiting('account-1');
    // Slots still taken (by attempts in flight, or a dead worker's until they expire): their end or
    // the sweeper lets the events through; advancing now would only park them again.
    expect(fakes.advances).toEqual([]);
    fakes.roomNow = true;
    await processor.afterWaiting('account-1');
    expect(fakes.advances).toEqual(['account-1']);
  });

  it('reports skipped, and does not retry, when the event moved on before its attempt was recorded', async () => {
    fakes.recordAnswer = false;
    fakes.postAnswer = response(500, 'HTTP 500');
    await expect(fakes.processor().process(fakes.job())).resolves.toBe('skipped');
  });

  it('ends the job held, neither retried nor counted dead, when the endpoint was disabled during the attempt', async () => {
    fakes.recordAnswer = 'held';
    fakes.postAnswer = response(500, 'HTTP 500');
    await expect(fakes.processor().process(fakes.job())).resolves.toBe('held');
    fakes.event = dueEvent({ cycleAttempts: SCHEDULE.length });
    const before = await failedCount('schedule_exhausted');
    await expect(fakes.processor().process(fakes.job())).resolves.toBe('held');
    expect(await failedCount('schedule_exhausted')).toBe(before);
    expect(fakes.records).toEqual([
      expect.objectContaining({ status: 'pending', error: 'HTTP 500' }),
      expect.objectContaining({ status: 'failed', error: 'HTTP 500' }),
    ]);
    expect(fakes.disables).toEqual([]);
  });

  it('frees the account slot even when recording throws', async () => {
    fakes.store.record = async () => {
      throw new Error('database down');
    };
    fakes.postAnswer = response(502, 'HTTP 502');
    await expect(fakes.processor().process(fakes.job())).rejects.toThrow('database down');
    expect(fakes.held.size).toBe(0);
  });

  describe('the endpoint', () => {
    it('on HTTP 410 records the attempt held, in the transaction that disables the endpoint (gone), and completes the job', async () => {
      fakes.postAnswer = response(410, 'HTTP 410 (endpoint gone)');
      await expect(fakes.processor().process(fakes.job())).resolves.toBe('held');
      expect(fakes.disables).toEqual([{ accountId: fakes.event?.accountId, reason: 'gone' }]);
      expect(fakes.recordsInDisable).toEqual([
        expect.objectContaining({ status: 'held', nextAttemptAt: null, error: 'HTTP 410 (endpoint gone)' }),
      ]);
      expect(fakes.records).toEqual([]);
      expect(fakes.log).toEqual(['attempt 1/3 · HTTP 410 (endpoint gone) · 12 ms · endpoint disabled, event held']);
    });

    it('on a late HTTP 410 from a url the account has left, disables nothing and retries (at the new url)', async () => {
      fakes.postAnswer = response(410, 'HTTP 410 (endpoint gone)');
      fakes.movedAnswer = true;
      await expect(fakes.processor().process(fakes.job())).rejects.toBeInstanceOf(DeliveryRetry);
      expect(fakes.disables).toEqual([]);
      expect(fakes.recordsInDisable).toEqual([expect.objectContaining({ url: fakes.event?.webhookUrl })]);
    });

    it('on the last failure disables an endpoint failing longer than WEBHOOK_DISABLE_AFTER (failing); the event stays failed', async () => {
      fakes.event = dueEvent({ cycleAttempts: SCHEDULE.length });
      fakes.postAnswer = response(500, 'HTTP 500');
      fakes.failingSince = new Date(Date.now() - DISABLE_AFTER_MS - 60_000);
      await expect(fakes.processor().process(fakes.job())).rejects.toBeInstanceOf(DeliveryGaveUp);
      expect(fakes.records).toEqual([expect.objectContaining({ status: 'failed' })]);
      expect(fakes.disables).toEqual([{ accountId: fakes.event.accountId, reason: 'failing' }]);
    });

    it('does not disable on the last failure of an endpoint failing for less than WEBHOOK_DISABLE_AFTER, nor on a retry', async () => {
      fakes.event = dueEvent({ cycleAttempts: SCHEDULE.length });
      fakes.postAnswer = response(500, 'HTTP 500');
      fakes.failingSince = new Date(Date.now() - DISABLE_AFTER_MS + 60_000);
      await expect(fakes.processor().process(fakes.job())).rejects.toBeInstanceOf(DeliveryGaveUp);
      fakes.event = dueEvent();
      fakes.failingSince = new Date(0);
      await expect(fakes.processor().process(fakes.job())).rejects.toBeInstanceOf(DeliveryRetry);
      expect(fakes.disables).toEqual([]);
    });

    it('sends nothing for an account whose endpoint is disabled: the event is held and the job completes', async () => {
      fakes.event = dueEvent({ disabledAt: new Date() });
      await expect(fakes.processor().process(fakes.job())).resolves.toBe('held');
      expect(fakes.holds).toEqual([fakes.event.id]);
      expect(fakes.posts).toEqual([]);
      expect(fakes.held.size).toBe(0);
    });

    it('loads the event again soon when its endpoint was enabled between the load and the hold', async () => {
      fakes.event = dueEvent({ disabledAt: new Date() });
      fakes.holdAnswer = false;
      const error = await thrownBy(fakes.processor().process(fakes.job()));
      expect(error).toBeInstanceOf(DeliveryRetry);
      expect(fakes.posts).toEqual([]);
    });

    it('skips a held event, and a released one still waiting its turn, sending nothing', async () => {
      fakes.event = dueEvent({ deliveryStatus: 'held', nextAttemptAt: null });
      await expect(fakes.processor().process(fakes.job())).resolves.toBe('skipped');
      fakes.event = dueEvent({ nextAttemptAt: null });
      await expect(fakes.processor().process(fakes.job())).resolves.toBe('skipped');
      expect(fakes.posts).toEqual([]);
    });

    it('after an attempt of an account with released events waiting, lets the next through', async () => {
      fakes.event = dueEvent({ waiting: true });
      await fakes.processor().process(fakes.job());
      expect(fakes.advances).toEqual([fakes.event.accountId]);
      fakes.event = dueEvent();
      await fakes.processor().process(fakes.job());
      expect(fakes.advances).toHaveLength(1);
      // An event parked while this attempt was in flight: the slot's release says so.
      fakes.othersWaiting = true;
      await fakes.processor().process(fakes.job());
      expect(fakes.advances).toHaveLength(2);
    });

    it("asks for a retry of a promotion passed over only at the end of the account's last attempt here", async () => {
      fakes.event = dueEvent({ waiting: true });
      let answerFirst = (): void => undefined;
      const firstAnswered = new Promise<void>((resolve) => (answerFirst = resolve));
      const post = fakes.http.post;
      let calls = 0;
      Object.assign(fakes.http, {
        post: async (...args: Parameters<WebhookPoster['post']>) => {
          calls += 1;
          if (calls === 1) await firstAnswered;
          return post(...args);
        },
      });
      const running = fakes.processor();
      const first = running.process(fakes.job());
      while (calls === 0) await new Promise((resolve) => setImmediate(resolve));
      // The second attempt ends while the first is in flight: the first's end will advance the account.
      await running.process(fakes.job());
      answerFirst();
      await first;
      expect(fakes.retries).toEqual([false, true]);
    });
  });
});
