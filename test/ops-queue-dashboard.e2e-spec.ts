import { randomBytes } from 'node:crypto';
import type { Response, Test } from 'supertest';
import { expectError } from './helpers/expect-error';
import { createAccount, createVerification, createVerificationInStatus, transition } from './helpers/factories';
import { RedisServer } from './helpers/redis-server';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver, verifySignature } from './helpers/webhook-receiver';
import { waitFor } from './helpers/poll';

const QUEUE = 'webhook-deliveries';
/** U+2192, as the job data writes a status change. */
const ARROW = '\u2192';

interface BoardJob {
  id: string;
  name: string;
  data: Record<string, unknown>;
  failedReason?: string;
}

/** bull-board's GET /api/queues/:queueName/:jobId. */
interface JobView {
  status: string;
  job: BoardJob;
}

interface EventJson {
  id: string;
  type: string;
  delivery_status: string;
  attempt_count: number;
  last_error: string | null;
  payload: { data: { verification: { id: string; status: string } } };
}

/** A request to the dashboard, as operator `admin` with the admin token. */
function board(t: TestApp, path: string, method: 'get' | 'put' | 'post' = 'get'): Test {
  const credentials = Buffer.from(`admin:${t.adminToken}`).toString('base64');
  return t.http[method](`/admin/queues${path}`).set('authorization', `Basic ${credentials}`);
}

/** The dashboard API path of one delivery cycle's job (the UI encodes the id the same way). */
function jobPath(eventId: string, cycle = 1): string {
  return `/api/queues/${QUEUE}/${encodeURIComponent(`${eventId}:${cycle}`)}`;
}

/** A 2xx; on failure the message shows what bull-board or the service answered instead. */
function expectSuccess(res: Response): void {
  expect(`${res.status} ${JSON.stringify(res.body)}`).toMatch(/^2\d\d /);
}

async function readJob(t: TestApp, eventId: string, cycle = 1): Promise<JobView | null> {
  const res = await board(t, jobPath(eventId, cycle));
  if (res.status === 404) return null;
  expect(res.status).toBe(200);
  return res.body as JobView;
}

/**
 * Waits for a job's status. bull-board reads a job's fields before its status, so the view that
 * first shows a final status (completed, failed) may carry the fields of just before the move (an
 * earlier attempt's reason); a final status stays, so for those the job is read once more.
 */
async function waitForJob(t: TestApp, eventId: string, status: string, cycle = 1): Promise<JobView> {
  const first = (await waitFor(
    () => readJob(t, eventId, cycle),
    (view) => view?.status === status,
    `job ${eventId}:${cycle} to be ${status}`,
  )) as JobView;
  if (status !== 'completed' && status !== 'failed') return first;
  const view = await readJob(t, eventId, cycle);
  expect(view?.status).toBe(status);
  return view as JobView;
}

async function jobLogs(t: TestApp, eventId: string, cycle = 1): Promise<string[]> {
  const res = await board(t, `${jobPath(eventId, cycle)}/logs`);
  expect(res.status).toBe(200);
  return res.body as string[];
}

/** Ids of the queue's jobs in one status, as the dashboard's tab lists them. */
async function jobIds(t: TestApp, status: 'failed' | 'delayed' | 'completed'): Promise<string[]> {
  const res = await board(t, `/api/queues?activeQueue=${QUEUE}&status=${status}&page=1&jobsPerPage=300`);
  expect(res.status).toBe(200);
  const queue = (res.body.queues as { name: string; jobs: BoardJob[] }[]).find((q) => q.name === QUEUE);
  return (queue?.jobs ?? []).map((job) => job.id);
}

async function eventDetail(t: TestApp, secret: string, id: string): Promise<EventJson> {
  const res = await t.http.get(`/api/v1/public/kyc/webhook-events/${id}`).set('authorization', `Bearer ${secret}`);
  expect(res.status).toBe(200);
  return res.body as EventJson;
}

function waitForDelivery(t: TestApp, secret: string, id: string, status: string, timeoutMs = 15_000) {
  return waitFor(
    () => eventDetail(t, secret, id),
    (event) => event.delivery_status === status,
    `event ${id} to be ${status}`,
    timeoutMs,
  );
}

/** The id of the event of a verification's change to `status`. */
async function eventOf(t: TestApp, secret: string, verificationId: string, status: string): Promise<string> {
  const res = await t.http
    .get(`/api/v1/public/kyc/webhook-events?verification_id=${verificationId}&limit=100`)
    .set('authorization', `Bearer ${secret}`);
  expect(res.status).toBe(200);
  const matching = (res.body.data as EventJson[]).filter((e) => e.payload.data.verification.status === status);
  expect(matching).toHaveLength(1);
  return matching[0].id;
}

async function storedCycle(t: TestApp, id: string): Promise<{ cycle: number; delivery_status: string } | undefined> {
  const { rows } = await t.db.query('SELECT cycle, delivery_status FROM webhook_events WHERE id = $1', [id]);
  return rows[0] as { cycle: number; delivery_status: string } | undefined;
}

/** One receiver per test, so each test programs its own replies; all closed with the app. */
function receivers(): { start(): Promise<WebhookReceiver>; closeAll(): Promise<void> } {
  const started: WebhookReceiver[] = [];
  return {
    start: async () => {
      const receiver = await WebhookReceiver.start();
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      await Promise.all(started.map((receiver) => receiver.close()));
    },
  };
}

const ONE_ATTEMPT_OF_THREE = /^attempt 1\/3 · HTTP 200 · \d+ ms · delivered$/;

describe('queue dashboard: one job per delivery cycle, with its attempts and outcome', () => {
  let t: TestApp;
  const hooks = receivers();

  beforeAll(async () => {
    t = await startApp({
      APP_ROLE: 'all',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_board_jobs`,
      WEBHOOK_RETRY_SCHEDULE: '200ms,200ms',
      WEBHOOK_TIMEOUT_MS: '3000',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
  });

  afterAll(async () => {
    await t.close();
    await hooks.closeAll();
  });

  /** An event whose receiver answers 500 until its schedule is used up: its job ends on the Failed tab. */
  const deadEvent = async () => {
    const receiver = await hooks.start();
    receiver.respondWith({ status: 500 });
    const account = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerificationInStatus(t, account.id, 'processing');
    const eventId = await eventOf(t, account.secret, v.id, 'processing');
    const { job } = await waitForJob(t, eventId, 'failed');
    return { receiver, account, eventId, job };
  };

  it('names a job by its event type; its data shows ids, the change and the target, never the payload or a secret', async () => {
    const receiver = await hooks.start();
    const account = await createAccount(t, { webhook_url: receiver.url });
    const externalUserId = `dash-user-${randomBytes(6).toString('hex')}`;
    const created = await createVerification(t, account.id, {
      external_user_id: externalUserId,
      applicant: { first_name: 'Grace', last_name: 'Hopper', email: 'grace.hopper@example.com' },
    });
    await transition(t, created.id, { status: 'processing' });
    await transition(t, created.id, { status: 'approved' });
    const target = `127.0.0.1:${receiver.port}`;

    for (const [status, change] of [
      ['processing', `pending ${ARROW} processing`],
      ['approved', `processing ${ARROW} approved`],
    ]) {
      const eventId = await eventOf(t, account.secret, created.id, status);
      const { job } = await waitForJob(t, eventId, 'completed');
      expect(job.id).toBe(`${eventId}:1`);
      expect(job.name).toBe('verification.status_changed');
      expect(job.data).toEqual({
        eventId,
        cycle: 1,
        accountId: account.id,
        verificationId: created.id,
        change,
        target,
      });
      const data = JSON.stringify(job.data);
      for (const leak of ['whsec_', account.secret, externalUserId, 'Hopper', 'grace.hopper@example.com'])
        expect(data).not.toContain(leak);
      expect(await jobLogs(t, eventId)).toEqual([expect.stringMatching(ONE_ATTEMPT_OF_THREE)]);
    }

    const test = await t.http
      .post('/api/v1/public/kyc/webhook-events/test')
      .set('authorization', `Bearer ${account.secret}`)
      .send({ status: 'approved' });
    expect(test.status).toBe(202);
    const { job } = await waitForJob(t, test.body.id, 'completed');
    expect(job.name).toBe('test');
    expect(job.data).toEqual({
      eventId: test.body.id,
      cycle: 1,
      accountId: account.id,
      change: `processing ${ARROW} approved`,
      target,
    });
    expect(job.data).not.toHaveProperty('verificationId');
    for (const leak of ['whsec_', 'test_user']) expect(JSON.stringify(job.data)).not.toContain(leak);
  });

  it('logs every attempt and ends a cycle that used up the schedule as a failed job, as the delivery log says', async () => {
    const { receiver, account, eventId, job } = await deadEvent();
    expect(job.failedReason).toBe('gave up after 3 attempts: HTTP 500');
    expect(await jobLogs(t, eventId)).toEqual([
      expect.stringMatching(/^attempt 1\/3 · HTTP 500 · \d+ ms · next in \d/),
      expect.stringMatching(/^attempt 2\/3 · HTTP 500 · \d+ ms · next in \d/),
      expect.stringMatching(/^attempt 3\/3 · HTTP 500 · \d+ ms · gave up$/),
    ]);
    expect(await jobIds(t, 'failed')).toContain(`${eventId}:1`);
    expect(receiver.for(eventId)).toHaveLength(3);
    const event = await eventDetail(t, account.secret, eventId);
    expect(event).toMatchObject({ delivery_status: 'failed', attempt_count: 3, last_error: 'HTTP 500' });
  });

  it('shows an event of an account without a webhook_url as a failed job', async () => {
    const account = await createAccount(t);
    const v = await createVerificationInStatus(t, account.id, 'processing');
    const eventId = await eventOf(t, account.secret, v.id, 'processing');

    const { job } = await waitForJob(t, eventId, 'failed');
    expect(job.failedReason).toMatch(/^no webhook_url/);
    expect(job.data).toMatchObject({ eventId, cycle: 1, accountId: account.id, target: 'no webhook_url' });
    expect(await jobIds(t, 'failed')).toContain(`${eventId}:1`);
    const event = await eventDetail(t, account.secret, eventId);
    expect(event).toMatchObject({ delivery_status: 'failed', attempt_count: 0 });
  });

  it('retries a failed job as a redelivery: a new cycle and job, the same webhook-id', async () => {
    const { receiver, account, eventId } = await deadEvent();
    expect(await storedCycle(t, eventId)).toEqual({ cycle: 1, delivery_status: 'failed' });

    // Slow enough that the new cycle is seen pending before it is delivered.
    receiver.respondWith({ status: 200, delayMs: 2_000 });
    expectSuccess(await board(t, `${jobPath(eventId)}/retry`, 'put'));
    await waitFor(
      () => storedCycle(t, eventId),
      (row) => row?.cycle === 2 && row.delivery_status === 'pending',
      `event ${eventId} to start cycle 2`,
    );
    const delivered = await waitForDelivery(t, account.secret, eventId, 'delivered');
    expect(delivered.attempt_count).toBe(4);
    expect(await storedCycle(t, eventId)).toEqual({ cycle: 2, delivery_status: 'delivered' });

    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([eventId, eventId, eventId, eventId]);
    expect(new Set(receiver.requests.map((r) => r.body)).size).toBe(1);
    expect(() => verifySignature(account.secret, receiver.requests[3])).not.toThrow();

    expect(await jobIds(t, 'failed')).not.toContain(`${eventId}:1`);
    const { job } = await waitForJob(t, eventId, 'completed', 2);
    expect(job.data).toMatchObject({ eventId, cycle: 2 });
    expect(await jobLogs(t, eventId, 2)).toEqual([expect.stringMatching(ONE_ATTEMPT_OF_THREE)]);
  });

  it("takes the dead cycle's job off the Failed tab when the client redelivers the event", async () => {
    const { receiver, account, eventId } = await deadEvent();

    // The client's own redelivery, not the dashboard's Retry: the new cycle's first attempt retires the old job.
    receiver.respondWith({ status: 200 });
    const res = await t.http
      .post(`/api/v1/public/kyc/webhook-events/${eventId}/redeliver`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(res.status).toBe(202);
    await waitForDelivery(t, account.secret, eventId, 'delivered');
    await waitFor(
      () => jobIds(t, 'failed'),
      (ids) => !ids.includes(`${eventId}:1`),
      `the job of event ${eventId}'s first cycle off the Failed tab`,
    );
  });

  it('takes a failed job whose event no longer exists off the Failed tab on Retry, queuing nothing', async () => {
    const { eventId } = await deadEvent();
    await t.db.query('DELETE FROM webhook_attempts WHERE event_id = $1', [eventId]);
    await t.db.query('DELETE FROM webhook_events WHERE id = $1', [eventId]);

    expectSuccess(await board(t, `${jobPath(eventId)}/retry`, 'put'));
    expect(await jobIds(t, 'failed')).not.toContain(`${eventId}:1`);
    expect((await board(t, jobPath(eventId, 2))).status).toBe(404);
  });

  // Last in this block: "Retry all" revives whatever is on the Failed tab, the earlier tests' jobs too.
  it('revives every failed event of an account, each delivered with its own webhook-id', async () => {
    const receiver = await hooks.start();
    receiver.respondWith({ status: 500 });
    const account = await createAccount(t, { webhook_url: receiver.url });
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const v = await createVerificationInStatus(t, account.id, 'processing');
      eventIds.push(await eventOf(t, account.secret, v.id, 'processing'));
    }
    for (const id of eventIds) await waitForJob(t, id, 'failed');
    // One more dead delivery whose event has since been deleted must not stop the others.
    const gone = await createVerificationInStatus(t, account.id, 'processing');
    const goneId = await eventOf(t, account.secret, gone.id, 'processing');
    await waitForJob(t, goneId, 'failed');
    await t.db.query('DELETE FROM webhook_attempts WHERE event_id = $1', [goneId]);
    await t.db.query('DELETE FROM webhook_events WHERE id = $1', [goneId]);

    receiver.respondWith({ status: 200 });
    expectSuccess(await board(t, `/api/queues/${QUEUE}/retry/failed`, 'put'));

    for (const id of eventIds) {
      const event = await waitForDelivery(t, account.secret, id, 'delivered');
      expect(event.attempt_count).toBe(4);
      const received = receiver.requests.filter((r) => JSON.parse(r.body).id === id);
      expect(received.map((r) => r.headers['webhook-id'])).toEqual([id, id, id, id]);
      expect(await storedCycle(t, id)).toEqual({ cycle: 2, delivery_status: 'delivered' });
      await waitForJob(t, id, 'completed', 2);
    }
    const failed = await jobIds(t, 'failed');
    for (const id of [...eventIds, goneId]) expect(failed).not.toContain(`${id}:1`);
  });
});

describe('queue dashboard: delayed jobs', () => {
  let t: TestApp;
  const hooks = receivers();

  beforeAll(async () => {
    t = await startApp({
      APP_ROLE: 'all',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_board_delayed`,
      WEBHOOK_RETRY_SCHEDULE: '3s,1h',
      WEBHOOK_TIMEOUT_MS: '1000',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
  });

  afterAll(async () => {
    await t.close();
    await hooks.closeAll();
  });

  it('shows a cycle still retrying as a delayed job with the last error, and promote makes the next attempt now', async () => {
    const receiver = await hooks.start();
    receiver.replies([{ status: 500 }, { status: 500 }, { status: 200 }]);
    const account = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerificationInStatus(t, account.id, 'processing');
    const eventId = await eventOf(t, account.secret, v.id, 'processing');

    await receiver.waitForCount(eventId, 2);
    await waitFor(
      () => jobLogs(t, eventId),
      (logs) => logs.length === 2,
      'the second attempt in the job log',
    );
    // The log line goes out alongside the attempt's record, before Bull moves the job back to
    // delayed with the new reason: wait for that reason, not only for the delayed state.
    const { job } = (await waitFor(
      () => readJob(t, eventId),
      (view) => view?.status === 'delayed' && (view.job.failedReason ?? '').includes('attempt 2/3'),
      'the job delayed after its second attempt',
    )) as JobView;
    // The reason is the last error, then which attempt it was and when the next one is.
    expect(job.failedReason).toMatch(/^HTTP 500 \(attempt 2\/3; next in \d[^)]*\)$/);
    expect(await jobIds(t, 'delayed')).toContain(`${eventId}:1`);
    expect(await jobLogs(t, eventId)).toEqual([
      expect.stringMatching(/^attempt 1\/3 · HTTP 500 · \d+ ms · next in \d/),
      expect.stringMatching(/^attempt 2\/3 · HTTP 500 · \d+ ms · next in \d/),
    ]);
    expect(await eventDetail(t, account.secret, eventId)).toMatchObject({
      delivery_status: 'pending',
      last_error: 'HTTP 500',
    });

    expectSuccess(await board(t, `${jobPath(eventId)}/promote`, 'put'));
    await receiver.waitForCount(eventId, 3, 10_000);
    await waitForDelivery(t, account.secret, eventId, 'delivered');
    await waitForJob(t, eventId, 'completed');
    expect((await jobLogs(t, eventId))[2]).toMatch(/^attempt 3\/3 · HTTP 200 · \d+ ms · delivered$/);
  });

  it('never loses an event whose delayed job is removed in the dashboard: the sweeper queues it again', async () => {
    const receiver = await hooks.start();
    receiver.replies([{ status: 500 }, { status: 200 }]);
    const account = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerificationInStatus(t, account.id, 'processing');
    const eventId = await eventOf(t, account.secret, v.id, 'processing');
    await receiver.waitForCount(eventId, 1);
    await waitForJob(t, eventId, 'delayed');

    expectSuccess(await board(t, `${jobPath(eventId)}/clean`, 'put'));
    expect(await readJob(t, eventId)).toBeNull();

    await waitForDelivery(t, account.secret, eventId, 'delivered', 20_000);
    expect(receiver.for(eventId)).toHaveLength(2);
  });
});

describe('queue dashboard: cross-site request forgery', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({
      APP_ROLE: 'all',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_board_csrf`,
      WEBHOOK_RETRY_SCHEDULE: '200ms',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  /** Every job of the queue, whatever its state, as the dashboard counts them. */
  async function jobTotal(): Promise<number> {
    const res = await board(t, '/api/queues');
    expect(res.status).toBe(200);
    const queue = (res.body.queues as { name: string; counts: Record<string, number> }[]).find((q) => q.name === QUEUE);
    return Object.values(queue?.counts ?? {}).reduce((sum, n) => sum + n, 0);
  }

  it('refuses a write from another origin or site with 403 forbidden, with or without credentials, adding no job', async () => {
    const before = await jobTotal();
    const forged: [string, Record<string, string>][] = [
      ['Origin of another site', { origin: 'https://attacker.example' }],
      ['Origin of another port', { origin: `http://127.0.0.1:${t.port + 1}` }],
      ['Origin null', { origin: 'null' }],
      ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
      ['own Origin but Sec-Fetch-Site cross-site', { origin: t.url, 'sec-fetch-site': 'cross-site' }],
    ];
    const answers: string[] = [];
    for (const [label, headers] of forged) {
      for (const method of ['post', 'put'] as const) {
        const path = method === 'post' ? `/api/queues/${QUEUE}/add` : `/api/queues/${QUEUE}/retry/failed`;
        const res = await board(t, path, method)
          .set(headers)
          .send(method === 'post' ? { name: 'forged', data: { eventId: 'x' } } : {});
        answers.push(`${label}: ${method.toUpperCase()} → ${res.status} ${res.body?.error?.code}`);
        if (res.status === 403) {
          expectError(res, 403, 'forbidden');
          expect(res.headers['www-authenticate']).toBeUndefined();
        }
      }
    }
    expect(answers).toEqual(
      forged.flatMap(([label]) => [`${label}: POST → 403 forbidden`, `${label}: PUT → 403 forbidden`]),
    );
    // Without credentials too: a forged request is refused before the credential is looked at.
    const anonymous = await t.http
      .post(`/admin/queues/api/queues/${QUEUE}/add`)
      .set('origin', 'https://attacker.example')
      .send({ name: 'forged' });
    expectError(anonymous, 403, 'forbidden');
    expect(await jobTotal()).toBe(before);
  });

  it('keeps same-origin writes, writes without Origin (curl) and cross-origin reads working', async () => {
    receiver.respondWith({ status: 500 });
    const account = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerificationInStatus(t, account.id, 'processing');
    const eventId = await eventOf(t, account.secret, v.id, 'processing');
    await waitForJob(t, eventId, 'failed');

    const read = await board(t, jobPath(eventId)).set({
      origin: 'https://attacker.example',
      'sec-fetch-site': 'cross-site',
    });
    expect(read.status).toBe(200);

    receiver.respondWith({ status: 200 });
    const sameOrigin = await board(t, `${jobPath(eventId)}/retry`, 'put').set({
      origin: t.url,
      'sec-fetch-site': 'same-origin',
    });
    expectSuccess(sameOrigin);
    await waitForDelivery(t, account.secret, eventId, 'delivered');

    // A tool that sends no Origin and no Sec-Fetch-Site: allowed (it holds the password itself).
    expectSuccess(await board(t, `/api/queues/${QUEUE}/retry/failed`, 'put'));
    // A browser's own navigation (typed URL, bookmark) says none.
    expectSuccess(await board(t, `/api/queues/${QUEUE}/retry/failed`, 'put').set('sec-fetch-site', 'none'));
  });
});

describe('queue dashboard with Redis down', () => {
  let t: TestApp;
  let redis: RedisServer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    redis = await RedisServer.reserve();
    await redis.start();
    t = await startApp({
      APP_ROLE: 'all',
      REDIS_URL: redis.url,
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_board_redis_down`,
    });
  });

  afterAll(async () => {
    await t.close();
    await redis.stop();
    await receiver.close();
  });

  /** An event delivered while Redis is up: its job is in the dashboard. */
  async function deliveredEvent(): Promise<string> {
    const account = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerificationInStatus(t, account.id, 'processing');
    const eventId = await eventOf(t, account.secret, v.id, 'processing');
    await waitForJob(t, eventId, 'completed');
    return eventId;
  }

  it('answers 503 service_unavailable on every dashboard route while Redis is down, and serves again once it is back', async () => {
    const eventId = await deliveredEvent();
    expect((await board(t, '')).status).toBe(200);

    await redis.stop();
    const routes: [string, 'get' | 'put'][] = [
      ['', 'get'],
      ['/api/queues', 'get'],
      [`/api/queues?activeQueue=${QUEUE}&status=failed&page=1`, 'get'],
      [jobPath(eventId), 'get'],
      [`${jobPath(eventId)}/logs`, 'get'],
      [`${jobPath(eventId)}/retry`, 'put'],
      [`${jobPath(eventId)}/promote`, 'put'],
      [`/api/queues/${QUEUE}/retry/failed`, 'put'],
    ];
    const answers: Response[] = [];
    for (const [path, method] of routes) answers.push(await board(t, path, method));
    const label = ([path, method]: [string, string]) => `${method.toUpperCase()} /admin/queues${path}`;
    expect(answers.map((res, i) => `${label(routes[i])} → ${res.status} ${res.body?.error?.code}`)).toEqual(
      routes.map((route) => `${label(route)} → 503 service_unavailable`),
    );
    for (const res of answers) expectError(res, 503, 'service_unavailable');

    // The restarted redis-server is empty: the dashboard serves again, and a new event's job shows.
    await redis.start();
    await waitFor(
      async () => (await board(t, '/api/queues')).status,
      (status) => status === 200,
      'the dashboard API to answer again',
    );
    const page = await board(t, '');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/html/);
    const fresh = await deliveredEvent();
    expect((await readJob(t, fresh))?.job.id).toBe(`${fresh}:1`);
  });
});
