import Redis from 'ioredis';
import { createAccount, createVerification, transition } from './helpers/factories';
import { jsonLines } from './helpers/ops-infra';
import { RedisServer } from './helpers/redis-server';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';
import { waitFor } from './helpers/poll';

const FAST = { WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms', OUTBOX_SWEEP_INTERVAL_MS: '300' };

async function eventIdsOf(t: TestApp, verificationIds: string[]): Promise<string[]> {
  const res = await t.db.query(
    'SELECT id FROM webhook_events WHERE verification_id = ANY($1::uuid[]) ORDER BY created_at',
    [verificationIds],
  );
  return res.rows.map((row: { id: string }) => row.id);
}

async function waitForStatus(t: TestApp, eventId: string, status: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.db.query('SELECT delivery_status FROM webhook_events WHERE id = $1', [eventId]);
    if (res.rows[0]?.delivery_status === status) return;
    if (Date.now() > deadline)
      throw new Error(`event ${eventId} is ${res.rows[0]?.delivery_status}, expected ${status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('webhook delivery survives Redis outages', () => {
  let receiver: WebhookReceiver;
  let redis: RedisServer;
  let t: TestApp | undefined;

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
    redis = await RedisServer.reserve();
  });

  afterEach(async () => {
    await t?.close();
    t = undefined;
    await redis.stop();
    await receiver.close();
  });

  it('answers transitions fast while Redis is down and delivers all of them once it is back', async () => {
    await redis.start();
    t = await startApp({ ...FAST, REDIS_URL: redis.url });
    const account = await createAccount(t, { webhook_url: receiver.url });
    const verifications = await Promise.all(
      Array.from({ length: 5 }, () => createVerification(t as TestApp, account.id)),
    );
    await redis.stop();
    for (const v of verifications) {
      const started = Date.now();
      const res = await t.http
        .post(`/api/v1/internal/kyc/verifications/${v.id}/transitions`)
        .set('authorization', `Bearer ${t.internalToken}`)
        .send({ status: 'processing' });
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(3_000);
    }
    const ids = await eventIdsOf(
      t,
      verifications.map((v) => v.id),
    );
    expect(ids).toHaveLength(5);
    await redis.start();
    await receiver.waitFor(
      () => ids.every((id) => receiver.for(id).length >= 1),
      30_000,
      'all 5 webhooks after the outage',
    );
    for (const id of ids) await waitForStatus(t, id, 'delivered');
  });

  it('starts with Redis unreachable, keeps the API working, and delivers once Redis comes up', async () => {
    t = await startApp({ ...FAST, REDIS_URL: redis.url });
    const account = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerification(t, account.id);
    const started = Date.now();
    await transition(t, v.id, { status: 'processing' });
    expect(Date.now() - started).toBeLessThan(3_000);
    const list = await t.http.get('/api/v1/public/kyc/webhook-events').set('authorization', `Bearer ${account.secret}`);
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    await redis.start();
    const [id] = await eventIdsOf(t, [v.id]);
    await receiver.waitForCount(id, 1, 30_000);
    await waitForStatus(t, id, 'delivered');
    expect(t.output.join('')).not.toMatch(/unhandled/i);
  });

  /** Sends the app one status change while the private Redis refuses every write (maxmemory 1, noeviction). */
  async function changeWhileRedisIsFull(app: TestApp, admin: Redis): Promise<string> {
    const account = await createAccount(app, { webhook_url: receiver.url });
    const v = await createVerification(app, account.id);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '1');
    await transition(app, v.id, { status: 'processing' });
    const [eventId] = await eventIdsOf(app, [v.id]);
    return eventId;
  }

  it('names the OOM in the log when Redis refuses writes (maxmemory, noeviction), not EXECABORT', async () => {
    await redis.start();
    t = await startApp({ ...FAST, REDIS_URL: redis.url, LOG_LEVEL: 'warn' });
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      await changeWhileRedisIsFull(t, admin);
      const refusals = await waitFor(
        async () =>
          jsonLines((t as TestApp).output)
            .map((line) => String(line.msg ?? ''))
            .filter((msg) => /could not enqueue|outbox sweep failed/.test(msg)),
        (found) => found.some((msg) => msg.startsWith('could not enqueue')) && found.length >= 2,
        'the failed enqueue to be logged',
      );
      for (const msg of refusals) expect(msg).toContain("OOM command not allowed when used memory > 'maxmemory'");
      expect(t.output.join('')).not.toContain('EXECABORT');
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      admin.disconnect();
    }
  });

  it('delivers an event whose enqueue Redis refused at maxmemory once it accepts writes again', async () => {
    await redis.start();
    t = await startApp({ ...FAST, REDIS_URL: redis.url });
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const eventId = await changeWhileRedisIsFull(t, admin);
      // Long enough for the sweeper to be refused too (it relays events overdue by 3 s).
      await new Promise((resolve) => setTimeout(resolve, 3_500));
      await admin.config('SET', 'maxmemory', '0');
      await waitForStatus(t, eventId, 'delivered', 15_000);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
      admin.disconnect();
    }
  });
});

describe('webhook delivery across worker processes', () => {
  let receiver: WebhookReceiver;
  const apps: TestApp[] = [];
  const prefix = `${process.env.QUEUE_PREFIX}_workers`;

  async function start(env: Record<string, string>): Promise<TestApp> {
    const app = await startApp({ ...FAST, QUEUE_PREFIX: prefix, ...env });
    apps.push(app);
    return app;
  }

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });

  afterEach(async () => {
    for (const app of apps.splice(0)) {
      if (app.process.exitCode === null && app.process.signalCode === null) await app.close();
    }
    await receiver.close();
  });

  it('delivers after a worker is SIGKILLed mid-delivery and another worker starts', async () => {
    const api = await start({ APP_ROLE: 'api' });
    const worker = await start({ APP_ROLE: 'worker', WEBHOOK_TIMEOUT_MS: '30000' });
    receiver.replies([{ hang: true }, { status: 200 }]);
    const account = await createAccount(api, { webhook_url: receiver.url });
    const v = await createVerification(api, account.id);
    await transition(api, v.id, { status: 'processing' });
    const [id] = await eventIdsOf(api, [v.id]);
    await receiver.waitForCount(id, 1);
    await worker.kill();
    await start({ APP_ROLE: 'worker', WEBHOOK_TIMEOUT_MS: '30000' });
    const received = await receiver.waitForCount(id, 2, 45_000);
    expect(received.every((r) => r.headers['webhook-id'] === id)).toBe(true);
    await waitForStatus(api, id, 'delivered');
  }, 90_000);

  it('an api process takes no jobs; a worker serves no API routes', async () => {
    const api = await start({ APP_ROLE: 'api' });
    const account = await createAccount(api, { webhook_url: receiver.url });
    const v = await createVerification(api, account.id);
    await transition(api, v.id, { status: 'processing' });
    const [id] = await eventIdsOf(api, [v.id]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.for(id)).toHaveLength(0);
    const worker = await start({ APP_ROLE: 'worker' });
    await receiver.waitForCount(id, 1);
    expect((await worker.http.get('/health/live')).status).toBe(200);
    const refused = await worker.http
      .get('/api/v1/public/kyc/webhook-events')
      .set('authorization', `Bearer ${account.secret}`);
    expect(refused.status).toBe(404);
    expect(refused.body.error.code).toBe('not_found');
  });

  it('on SIGTERM finishes the delivery in flight, records it, and exits 0', async () => {
    const app = await start({ APP_ROLE: 'all', WEBHOOK_TIMEOUT_MS: '10000' });
    receiver.respondWith({ status: 200, delayMs: 1_500 });
    const account = await createAccount(app, { webhook_url: receiver.url });
    const v = await createVerification(app, account.id);
    await transition(app, v.id, { status: 'processing' });
    const [id] = await eventIdsOf(app, [v.id]);
    await receiver.waitForCount(id, 1);
    const db = app.db;
    const exit = new Promise<number | null>((resolve) => app.process.once('exit', (code) => resolve(code)));
    app.process.kill('SIGTERM');
    expect(await exit).toBe(0);
    const row = await startApp({ APP_ROLE: 'api', QUEUE_PREFIX: prefix }).then(async (other) => {
      apps.push(other);
      const res = await other.db.query('SELECT delivery_status, attempt_count FROM webhook_events WHERE id = $1', [id]);
      return res.rows[0];
    });
    expect(row).toEqual({ delivery_status: 'delivered', attempt_count: 1 });
    await db.end();
  });
});
