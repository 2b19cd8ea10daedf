import { createAccount, createVerification, createVerificationInStatus, transition } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver, verifySignature } from './helpers/webhook-receiver';

interface EventJson {
  id: string;
  delivery_status: string;
  attempt_count: number;
  last_error: string | null;
  last_response_status: number | null;
  next_attempt_at: string | null;
  payload: {
    id: string;
    type: string;
    data: { previous_status: string | null; verification: { id: string; status: string; version: number } };
  };
  attempts?: {
    number: number;
    at: string;
    response_status: number | null;
    duration_ms: number;
    error: string | null;
  }[];
}

const SCHEDULE = '200ms,200ms,200ms';
const ATTEMPTS = 4;

describe('webhook delivery', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_delivery`,
      WEBHOOK_RETRY_SCHEDULE: SCHEDULE,
      WEBHOOK_TIMEOUT_MS: '1000',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  beforeEach(() => receiver.respondWith({ status: 200 }));

  async function events(secret: string, verificationId: string): Promise<EventJson[]> {
    const res = await t.http
      .get(`/api/v1/public/kyc/webhook-events?verification_id=${verificationId}&limit=100`)
      .set('authorization', `Bearer ${secret}`);
    expect(res.status).toBe(200);
    return res.body.data as EventJson[];
  }

  async function eventDetail(secret: string, id: string): Promise<EventJson> {
    const res = await t.http.get(`/api/v1/public/kyc/webhook-events/${id}`).set('authorization', `Bearer ${secret}`);
    expect(res.status).toBe(200);
    return res.body as EventJson;
  }

  async function waitForEvent(
    secret: string,
    id: string,
    predicate: (event: EventJson) => boolean,
    timeoutMs = 20_000,
  ): Promise<EventJson> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const event = await eventDetail(secret, id);
      if (predicate(event)) return event;
      if (Date.now() > deadline)
        throw new Error(`event ${id} never reached the expected state: ${JSON.stringify(event)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function oneEvent(secret: string, verificationId: string): Promise<EventJson> {
    const list = await events(secret, verificationId);
    expect(list).toHaveLength(1);
    return list[0];
  }

  it('delivers each transition exactly once, signed (checked with standardwebhooks itself)', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerificationInStatus(t, account.id, 'rejected');
    const list = await events(account.secret, v.id);
    expect(list).toHaveLength(2);
    for (const event of list) await waitForEvent(account.secret, event.id, (e) => e.delivery_status === 'delivered');
    const received = list.flatMap((event) => receiver.for(event.id));
    expect(received).toHaveLength(2);
    for (const request of received) {
      expect(request.method).toBe('POST');
      expect(request.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      const body = verifySignature(account.secret, request) as EventJson['payload'];
      expect(body.id).toBe(request.headers['webhook-id']);
      expect(body.type).toBe('verification.status_changed');
      expect(body.data.verification.id).toBe(v.id);
      const stored = list.find((event) => event.id === body.id);
      expect(stored?.payload).toEqual(JSON.parse(request.body));
    }
    const byVersion = received
      .map((r) => JSON.parse(r.body) as EventJson['payload'])
      .sort((a, b) => a.data.verification.version - b.data.verification.version);
    expect(byVersion.map((b) => [b.data.previous_status, b.data.verification.status])).toEqual([
      ['pending', 'processing'],
      ['processing', 'rejected'],
    ]);
    const detail = await eventDetail(account.secret, list[0].id);
    expect(detail.attempt_count).toBe(1);
    expect(detail.attempts).toEqual([
      { number: 1, at: expect.any(String), response_status: 200, duration_ms: expect.any(Number), error: null },
    ]);
    expect(detail.last_error).toBeNull();
    expect(detail.next_attempt_at).toBeNull();
  });

  it('signs with every active secret during a rotation grace period', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    const rotated = await t.http
      .post(`/api/v1/admin/accounts/${account.id}/secret/rotate`)
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ grace_period_seconds: 3600 });
    expect(rotated.status).toBe(200);
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const event = await oneEvent(account.secret, v.id);
    const [request] = await receiver.waitForCount(event.id, 1);
    const signatures = String(request.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((s) => s.startsWith('v1,'))).toBe(true);
    // Each secret verifies on its own, with the other's signature removed.
    for (const [secret, signature] of [
      [rotated.body.webhook_secret as string, signatures[0]],
      [account.secret, signatures[1]],
    ]) {
      expect(() =>
        verifySignature(secret, { ...request, headers: { ...request.headers, 'webhook-signature': signature } }),
      ).not.toThrow();
    }
  });

  it('retries after failures, recording every attempt, with a stable webhook-id', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    receiver.replies([{ status: 500, body: 'boom' }, { status: 502 }, { status: 204 }]);
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const { id } = await oneEvent(account.secret, v.id);
    const event = await waitForEvent(account.secret, id, (e) => e.delivery_status === 'delivered');
    const received = receiver.for(id);
    expect(received).toHaveLength(3);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    expect(event.attempt_count).toBe(3);
    expect(event.attempts?.map((a) => [a.number, a.response_status, a.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 502, 'HTTP 502'],
      [3, 204, null],
    ]);
    const rows = await t.db.query('SELECT response_body FROM webhook_attempts WHERE event_id = $1 ORDER BY number', [
      id,
    ]);
    expect(rows.rows[0].response_body).toBe('boom');
  });

  it('fails after the whole schedule, then redelivery (one and bulk) brings it home with the same id', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    receiver.respondWith({ status: 500 });
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    await transition(t, v.id, { status: 'approved' });
    const list = await events(account.secret, v.id);
    expect(list).toHaveLength(2);
    for (const e of list) {
      const failed = await waitForEvent(account.secret, e.id, (x) => x.delivery_status === 'failed');
      expect(failed.attempt_count).toBe(ATTEMPTS);
      expect(failed.last_error).toBe('HTTP 500');
      expect(failed.last_response_status).toBe(500);
      expect(failed.next_attempt_at).toBeNull();
      expect(receiver.for(e.id)).toHaveLength(ATTEMPTS);
    }
    receiver.respondWith({ status: 200 });
    const [first, second] = list;
    const one = await t.http
      .post(`/api/v1/public/kyc/webhook-events/${first.id}/redeliver`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(one.status).toBe(202);
    expect(one.body).toMatchObject({
      id: first.id,
      object: 'webhook_event',
      delivery_status: 'pending',
      attempt_count: ATTEMPTS,
    });
    const redelivered = await waitForEvent(account.secret, first.id, (x) => x.delivery_status === 'delivered');
    expect(redelivered.attempt_count).toBe(ATTEMPTS + 1);
    expect(redelivered.attempts?.map((a) => a.number)).toEqual([1, 2, 3, 4, 5]);
    const again = receiver.for(first.id);
    expect(again).toHaveLength(ATTEMPTS + 1);
    expect(again[ATTEMPTS].body).toBe(again[0].body);

    const bulk = await t.http
      .post('/api/v1/public/kyc/webhook-events/redeliver')
      .set('authorization', `Bearer ${account.secret}`)
      .send({ delivery_status: 'failed' });
    expect(bulk.status).toBe(202);
    expect(bulk.body).toEqual({ object: 'redelivery', count: 1 });
    await waitForEvent(account.secret, second.id, (x) => x.delivery_status === 'delivered');
    expect(receiver.for(second.id).at(-1)?.headers['webhook-id']).toBe(second.id);
  });

  it('counts a redirect as a failure and does not follow it', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    receiver.respondWith((request) =>
      request.path === '/elsewhere' ? { status: 200 } : { status: 302, headers: { location: '/elsewhere' } },
    );
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const { id } = await oneEvent(account.secret, v.id);
    const event = await waitForEvent(account.secret, id, (x) => x.delivery_status === 'failed');
    expect(event.last_error).toBe('redirect not followed (HTTP 302)');
    expect(
      event.attempts?.every((a) => a.response_status === 302 && a.error === 'redirect not followed (HTTP 302)'),
    ).toBe(true);
    expect(receiver.requests.some((r) => r.path === '/elsewhere')).toBe(false);
  });

  it('records a hanging endpoint as a time-out with no response status', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    receiver.replies([{ hang: true }, { status: 200 }]);
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const { id } = await oneEvent(account.secret, v.id);
    const event = await waitForEvent(account.secret, id, (x) => x.delivery_status === 'delivered');
    expect(event.attempts?.map((a) => [a.response_status, a.error])).toEqual([
      [null, 'timeout: response'],
      [200, null],
    ]);
    expect(event.attempts?.[0].duration_ms).toBeGreaterThanOrEqual(900);
  });

  it('honours Retry-After on 503 when longer than the scheduled delay', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    receiver.replies([{ status: 503, headers: { 'retry-after': '2' } }, { status: 200 }]);
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const { id } = await oneEvent(account.secret, v.id);
    const [first, second] = await receiver.waitForCount(id, 2);
    expect(second.at - first.at).toBeGreaterThanOrEqual(1_900);
  });

  it('records events of an account without a webhook_url as failed/no_webhook_url with no attempt', async () => {
    const account = await createAccount(t);
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const event = await oneEvent(account.secret, v.id);
    expect(event).toMatchObject({
      delivery_status: 'failed',
      last_error: 'no_webhook_url',
      attempt_count: 0,
      next_attempt_at: null,
    });
    const detail = await eventDetail(account.secret, event.id);
    expect(detail.attempts).toEqual([]);
    const redelivered = await t.http
      .post(`/api/v1/public/kyc/webhook-events/${event.id}/redeliver`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(redelivered.status).toBe(202);
    const after = await waitForEvent(account.secret, event.id, (x) => x.delivery_status === 'failed');
    expect(after).toMatchObject({ last_error: 'no_webhook_url', attempt_count: 0 });
  });
});
