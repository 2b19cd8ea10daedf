import { CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver, verifySignature } from './helpers/webhook-receiver';

const BASE = '/api/v1/public/kyc/webhook-events';
const EVENT_KEYS = [
  'attempt_count',
  'created_at',
  'delivery_status',
  'id',
  'last_attempt_at',
  'last_error',
  'last_response_status',
  'next_attempt_at',
  'object',
  'payload',
  'type',
  'verification_id',
];

interface EventJson {
  id: string;
  created_at: string;
  delivery_status: string;
  verification_id: string;
  payload: {
    test?: boolean;
    data: { previous_status: string; verification: { status: string; external_user_id: string } };
  };
}

describe('webhook-events API', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let account: CreatedAccount;
  let other: CreatedAccount;
  let noUrl: CreatedAccount;
  const verificationIds: string[] = [];

  const get = (path: string, secret = account.secret) => t.http.get(path).set('authorization', `Bearer ${secret}`);
  const post = (path: string, body: object | undefined, secret = account.secret) => {
    const req = t.http.post(path).set('authorization', `Bearer ${secret}`);
    return body === undefined ? req : req.send(body);
  };

  async function waitForStatus(id: string, status: string, secret = account.secret): Promise<EventJson> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await get(`${BASE}/${id}`, secret);
      if (res.body.delivery_status === status) return res.body as EventJson;
      if (Date.now() > deadline) throw new Error(`event ${id} is ${res.body.delivery_status}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_events_api`,
      WEBHOOK_RETRY_SCHEDULE: '100ms',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
    account = await createAccount(t, { webhook_url: receiver.url });
    other = await createAccount(t, { webhook_url: receiver.url });
    noUrl = await createAccount(t);
    // Three verifications, two events each: 6 events, all delivered.
    for (let i = 0; i < 3; i++) {
      const v = await createVerification(t, account.id);
      await transition(t, v.id, { status: 'processing' });
      await transition(t, v.id, { status: 'approved' });
      verificationIds.push(v.id);
    }
    const v = await createVerification(t, other.id);
    await transition(t, v.id, { status: 'processing' });
    const all = await get(`${BASE}?limit=100`);
    for (const event of all.body.data as EventJson[]) await waitForStatus(event.id, 'delivered');
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('lists only the caller’s events, newest first, in the contract shape', async () => {
    const res = await get(BASE);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    const data = res.body.data as EventJson[];
    expect(data).toHaveLength(6);
    expect(Object.keys(data[0]).sort()).toEqual(EVENT_KEYS);
    expect(new Set(data.map((e) => e.verification_id))).toEqual(new Set(verificationIds));
    const order = data.map((e) => [e.created_at, e.id].join()).slice();
    expect(order).toEqual([...order].sort().reverse());
    expect(data[0]).toMatchObject({
      object: 'webhook_event',
      type: 'verification.status_changed',
      delivery_status: 'delivered',
      attempt_count: 1,
    });
  });

  it('pages with cursors without repeats or gaps, and refuses a cursor reused with other filters', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await get(`${BASE}?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...(res.body.data as EventJson[]).map((e) => e.id));
      cursor = res.body.next_cursor;
      if (cursor) {
        const misuse = await get(`${BASE}?limit=4&delivery_status=failed&cursor=${encodeURIComponent(cursor)}`);
        expect(misuse.status).toBe(400);
        expect(misuse.body.error.code).toBe('invalid_cursor');
        const foreign = await get(`${BASE}?limit=4&cursor=${encodeURIComponent(cursor)}`, other.secret);
        expect(foreign.status).toBe(400);
      }
    } while (cursor);
    const all = await get(`${BASE}?limit=100`);
    expect(seen).toEqual((all.body.data as EventJson[]).map((e) => e.id));
  });

  it('filters by delivery_status, verification_id and created range', async () => {
    const byVerification = await get(`${BASE}?verification_id=${verificationIds[1]}`);
    expect(byVerification.body.data.map((e: EventJson) => e.verification_id)).toEqual([
      verificationIds[1],
      verificationIds[1],
    ]);
    expect((await get(`${BASE}?delivery_status=failed,pending`)).body.data).toEqual([]);
    expect((await get(`${BASE}?delivery_status=delivered`)).body.data).toHaveLength(6);
    const all = (await get(`${BASE}?limit=100`)).body.data as EventJson[];
    const pivot = all[2].created_at;
    const from = (await get(`${BASE}?created_from=${pivot}`)).body.data as EventJson[];
    const to = (await get(`${BASE}?created_to=${pivot}`)).body.data as EventJson[];
    expect(from.every((e) => e.created_at >= pivot)).toBe(true);
    expect(to.every((e) => e.created_at < pivot)).toBe(true);
    expect(from.length + to.length).toBe(6);
  });

  it.each([
    ['delivery_status=sent', 'delivery_status'],
    ['verification_id=nope', 'verification_id'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['created_from=yesterday', 'created_from'],
    ['created_from=2026-02-01&created_to=2026-01-01', 'created_from'],
    ['status=approved', 'status'],
    ['limit=5&limit=6', 'limit'],
  ])('rejects ?%s with 400 naming %s', async (query, field) => {
    const res = await get(`${BASE}?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  it('shows one event with its attempts; another account’s event is 404; a malformed id is 400', async () => {
    const [event] = (await get(BASE)).body.data as EventJson[];
    const detail = await get(`${BASE}/${event.id}`);
    expect(detail.status).toBe(200);
    expect(Object.keys(detail.body).sort()).toEqual([...EVENT_KEYS, 'attempts'].sort());
    expect(detail.body.attempts).toEqual([
      { number: 1, at: expect.any(String), response_status: 200, duration_ms: expect.any(Number), error: null },
    ]);
    for (const res of [
      await get(`${BASE}/${event.id}`, other.secret),
      await post(`${BASE}/${event.id}/redeliver`, undefined, other.secret),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('not_found');
    }
    expect((await get(`${BASE}/not-a-uuid`)).status).toBe(400);
    expect((await get(`${BASE}/${event.id}?expand=attempts`)).status).toBe(400);
    expect((await post(`${BASE}/${event.id}/redeliver`, { force: true })).status).toBe(400);
    expect((await get(`${BASE}/01900000-0000-7000-8000-000000000000`)).status).toBe(404);
    expect((await get(BASE).set('authorization', 'Bearer whsec_nope')).status).toBe(401);
  });

  it('redelivers one event: 202, pending, same id and body, attempt_count keeps counting', async () => {
    const [event] = (await get(BASE)).body.data as EventJson[];
    const before = receiver.for(event.id).length;
    const res = await post(`${BASE}/${event.id}/redeliver`, undefined);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: event.id, delivery_status: 'pending', attempt_count: 1 });
    const delivered = await waitForStatus(event.id, 'delivered');
    expect(delivered).toMatchObject({ attempt_count: 2 });
    const received = receiver.for(event.id);
    expect(received).toHaveLength(before + 1);
    expect(received.at(-1)?.body).toBe(received[0].body);
  });

  it('bulk redelivery: validates its body, counts what it replays, scoped to the caller', async () => {
    for (const body of [
      {},
      { delivery_status: 'pending' },
      { delivery_status: 'bogus' },
      { delivery_status: 'failed', extra: 1 },
      { delivery_status: 'failed', created_from: 'x' },
    ]) {
      const res = await post(`${BASE}/redeliver`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
    const none = await post(`${BASE}/redeliver`, { delivery_status: 'failed' });
    expect(none.status).toBe(202);
    expect(none.body).toEqual({ object: 'redelivery', count: 0 });
    const all = (await get(`${BASE}?limit=100`)).body.data as EventJson[];
    const window = await post(`${BASE}/redeliver`, {
      delivery_status: 'delivered',
      created_from: all[1].created_at,
      created_to: all[0].created_at,
    });
    expect(window.status).toBe(202);
    expect(window.body).toEqual({ object: 'redelivery', count: 1 });
    await waitForStatus(all[1].id, 'delivered');
    const otherEvents = (await get(BASE, other.secret)).body.data as EventJson[];
    expect(otherEvents.every((e) => e.delivery_status === 'delivered')).toBe(true);
  });

  it.each(['pending', 'processing', 'approved', 'rejected'])(
    'sends a signed test event for status %s',
    async (status) => {
      const res = await post(`${BASE}/test`, { status });
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ object: 'webhook_event', delivery_status: 'pending' });
      expect(res.body.payload).toMatchObject({
        id: res.body.id,
        test: true,
        data: { verification: { status, external_user_id: 'test_user' } },
      });
      const [request] = await receiver.waitForCount(res.body.id, 1);
      const body = verifySignature(account.secret, request) as EventJson['payload'];
      expect(body.test).toBe(true);
      expect(body.data.verification.status).toBe(status);
      await waitForStatus(res.body.id, 'delivered');
    },
  );

  it('test events: unknown status is 400; no webhook_url is recorded as failed/no_webhook_url', async () => {
    expect((await post(`${BASE}/test`, { status: 'done' })).status).toBe(400);
    expect((await post(`${BASE}/test`, {})).status).toBe(400);
    const res = await post(`${BASE}/test`, { status: 'approved' }, noUrl.secret);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ delivery_status: 'failed', last_error: 'no_webhook_url', attempt_count: 0 });
  });
});

describe('Bull dashboard', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ APP_ROLE: 'api', QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_dashboard` });
  });

  afterAll(async () => {
    await t.close();
  });

  const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

  it('asks for HTTP Basic credentials', async () => {
    for (const authorization of [
      undefined,
      basic('admin', 'wrong'),
      basic('root', t.adminToken),
      `Bearer ${t.adminToken}`,
    ]) {
      const req = t.http.get('/admin/queues');
      const res = authorization ? await req.set('authorization', authorization) : await req;
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic/);
      expect(res.body.error.code).toBe('unauthorized');
    }
  });

  it('serves the dashboard and its API to admin with the admin token', async () => {
    const page = await t.http.get('/admin/queues').set('authorization', basic('admin', t.adminToken));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/html/);
    const api = await t.http.get('/admin/queues/api/queues').set('authorization', basic('admin', t.adminToken));
    expect(api.status).toBe(200);
    expect(JSON.stringify(api.body)).toContain('webhook-deliveries');
  });

  it("answers the dashboard API's own errors with the contract's error body", async () => {
    const res = await t.http
      .put('/admin/queues/api/queues/no-such-queue/pause')
      .set('authorization', basic('admin', t.adminToken));
    expectError(res, 404, 'not_found');
    // bull-board's own reason is kept as the message.
    expect(res.body.error.message).toMatch(/queue/i);
    const job = await t.http
      .get('/admin/queues/api/queues/webhook-deliveries/no-such-job')
      .set('authorization', basic('admin', t.adminToken));
    expectError(job, 404, 'not_found');
    expect(job.body.error.message).toMatch(/job/i);
    // Nest's own 404 under the dashboard's path is already in the contract's shape and passes unchanged.
    const unknown = await t.http.post('/admin/queues/no-such-page').set('authorization', basic('admin', t.adminToken));
    expectError(unknown, 404, 'not_found');
    expect(unknown.body.error.message).toBe('No route POST /admin/queues/no-such-page');
  });
});
