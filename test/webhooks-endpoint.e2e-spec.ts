import type { Test } from 'supertest';
import { expectError } from './helpers/expect-error';
import { type CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { metricValue, waitFor } from './helpers/poll';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

interface EndpointJson {
  object: 'webhook_endpoint';
  url: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  disabled_at: string | null;
  held_count: number;
  health: {
    last_success_at: string | null;
    last_failure_at: string | null;
    failing_since: string | null;
    consecutive_failures: number;
  };
}

interface EventJson {
  id: string;
  created_at: string;
  delivery_status: string;
  attempt_count: number;
  last_error: string | null;
  next_attempt_at: string | null;
}

const ENDPOINT = '/api/v1/public/kyc/webhook-endpoint';
const EVENTS = '/api/v1/public/kyc/webhook-events';
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Long enough for a held event's would-be delivery to have arrived, had one been sent. */
const QUIET_MS = 1_500;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The webhook endpoint as a resource: health, disable (410, long failure, client, operator), held events released in order. */
describe('webhook endpoint', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  const as = (account: CreatedAccount, req: Test) => req.set('authorization', `Bearer ${account.secret}`);
  const admin = (req: Test) => req.set('authorization', `Bearer ${t.adminToken}`);

  async function endpoint(account: CreatedAccount): Promise<EndpointJson> {
    const res = await as(account, t.http.get(ENDPOINT));
    expect(res.status).toBe(200);
    return res.body as EndpointJson;
  }

  async function patch(account: CreatedAccount, body: object): Promise<EndpointJson> {
    const res = await as(account, t.http.patch(ENDPOINT)).send(body);
    expect(`${res.status} ${JSON.stringify(res.body)}`).toMatch(/^200 /);
    return res.body as EndpointJson;
  }

  async function events(account: CreatedAccount, query = ''): Promise<EventJson[]> {
    const res = await as(account, t.http.get(`${EVENTS}?limit=100${query}`));
    expect(res.status).toBe(200);
    return res.body.data as EventJson[];
  }

  async function event(account: CreatedAccount, id: string): Promise<EventJson> {
    const res = await as(account, t.http.get(`${EVENTS}/${id}`));
    expect(res.status).toBe(200);
    return res.body as EventJson;
  }

  /** One status change, so one event; returns the event's id. */
  async function oneEvent(account: CreatedAccount): Promise<string> {
    const v = await createVerification(t, account.id);
    await transition(t, v.id, { status: 'processing' });
    const [created] = await events(account, `&verification_id=${v.id}`);
    return created.id;
  }

  async function metrics(): Promise<string> {
    return (await t.http.get('/metrics')).text;
  }

  describe('with the default in-flight limit', () => {
    beforeAll(async () => {
      receiver = await WebhookReceiver.start();
      t = await startApp({
        QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_endpoint`,
        WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms',
        WEBHOOK_DISABLE_AFTER: '300ms',
        LOG_LEVEL: 'warn',
        // No test here times out an attempt; a reply held back (delayMs) keeps a state long enough to see.
        WEBHOOK_TIMEOUT_MS: '5000',
        OUTBOX_SWEEP_INTERVAL_MS: '300',
      });
    });

    afterAll(async () => {
      await t.close();
      await receiver.close();
    });

    beforeEach(() => receiver.respondWith({ status: 200 }));

    it('reads the endpoint: url, enabled, nothing held, and health kept by every attempt', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      expect(await endpoint(account)).toEqual({
        object: 'webhook_endpoint',
        url: receiver.url,
        status: 'enabled',
        disabled_reason: null,
        disabled_at: null,
        held_count: 0,
        health: { last_success_at: null, last_failure_at: null, failing_since: null, consecutive_failures: 0 },
      });

      // The success is held back 1.5 s: the two failures' state lasts long enough to be read.
      receiver.replies([{ status: 500 }, { status: 503 }, { status: 200, delayMs: 1_500 }]);
      const id = await oneEvent(account);
      await receiver.waitForCount(id, 2);
      const failing = await waitFor(
        () => endpoint(account),
        (e) => e.health.consecutive_failures === 2,
        'two failures',
      );
      expect(failing.health.failing_since).toMatch(ISO_MS);
      expect(failing.health.last_failure_at).toMatch(ISO_MS);
      expect(failing.health.failing_since! < failing.health.last_failure_at!).toBe(true);
      expect(failing.health.last_success_at).toBeNull();

      const healthy = await waitFor(
        () => endpoint(account),
        (e) => e.health.last_success_at !== null,
        'a success',
      );
      expect(healthy.health).toMatchObject({ failing_since: null, consecutive_failures: 0 });
      expect(healthy.health.last_success_at! > healthy.health.last_failure_at!).toBe(true);
      expect(healthy.status).toBe('enabled');
    });

    it('disables the endpoint at once on HTTP 410: that event is held with its attempt logged, later events are held, nothing is sent', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      const before = metricValue(await metrics(), 'webhook_endpoint_disables_total', 'reason="gone"');
      receiver.respondWith({ status: 410 });
      const gone = await oneEvent(account);
      const first = await waitFor(
        () => event(account, gone),
        (e) => e.delivery_status === 'held',
        'the 410 event to be held',
      );
      expect(first).toMatchObject({ attempt_count: 1, last_error: 'HTTP 410 (endpoint gone)', next_attempt_at: null });

      const disabled = await endpoint(account);
      expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'gone', held_count: 1 });
      expect(disabled.disabled_at).toMatch(ISO_MS);
      expect(disabled.health.consecutive_failures).toBe(1);
      await waitFor(
        async () => t.output.join(''),
        (output) => output.includes(`webhook endpoint of account ${account.id} disabled: gone`),
        'the disable logged',
        5_000,
      );
      const after = await metrics();
      expect(metricValue(after, 'webhook_endpoint_disables_total', 'reason="gone"')).toBe(before + 1);
      // The service's own act, in the audit trail as the system's.
      const { rows: recorded } = await t.db.query(
        `SELECT actor_type, actor_via, changes, request_id FROM audit_events
          WHERE account_id = $1 AND action = 'webhook_endpoint.disabled'`,
        [account.id],
      );
      expect(recorded).toEqual([{ actor_type: 'system', actor_via: 'service', changes: ['status'], request_id: null }]);

      const later = await oneEvent(account);
      const heldNow = await event(account, later);
      expect(heldNow).toMatchObject({ delivery_status: 'held', next_attempt_at: null, attempt_count: 0 });
      await sleep(QUIET_MS);
      expect(receiver.for(gone)).toHaveLength(1);
      expect(receiver.for(later)).toHaveLength(0);
      expect((await events(account, '&delivery_status=held')).map((e) => e.id).sort()).toEqual([gone, later].sort());
      expect(
        await waitFor(
          metrics,
          (text) => metricValue(text, 'webhook_endpoints_disabled', 'reason="gone"') >= 1,
          'the gauge',
        ),
      ).toBeDefined();

      receiver.respondWith({ status: 200 });
      const enabled = await patch(account, { status: 'enabled' });
      expect(enabled).toMatchObject({ status: 'enabled', disabled_reason: null, disabled_at: null, held_count: 0 });
      await receiver.waitForCount(later, 1);
      await receiver.waitForCount(gone, 2);
      for (const id of [gone, later]) {
        const delivered = await waitFor(
          () => event(account, id),
          (e) => e.delivery_status === 'delivered',
          `${id}`,
        );
        expect(delivered.attempt_count).toBe(id === gone ? 2 : 1);
      }
    });

    it('answers 409 endpoint_disabled to a redelivery (single, bulk) and a test event while disabled, and changes nothing', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      const id = await oneEvent(account);
      await waitFor(
        () => event(account, id),
        (e) => e.delivery_status === 'delivered',
        'delivery',
      );
      await patch(account, { status: 'disabled' });
      const snapshot = await t.db.query(`SELECT * FROM webhook_events WHERE account_id = $1 ORDER BY id`, [account.id]);

      expectError(await as(account, t.http.post(`${EVENTS}/${id}/redeliver`)), 409, 'endpoint_disabled');
      expectError(
        await as(account, t.http.post(`${EVENTS}/redeliver`)).send({ delivery_status: 'delivered' }),
        409,
        'endpoint_disabled',
      );
      expectError(
        await as(account, t.http.post(`${EVENTS}/test`)).send({ status: 'approved' }),
        409,
        'endpoint_disabled',
      );
      expectError(
        await as(account, t.http.post(`${EVENTS}/0193a6f2-0000-7000-8000-000000000001/redeliver`)),
        404,
        'not_found',
      );
      const unchanged = await t.db.query(`SELECT * FROM webhook_events WHERE account_id = $1 ORDER BY id`, [
        account.id,
      ]);
      expect(unchanged.rows).toEqual(snapshot.rows);
      await sleep(300);
      expect(receiver.for(id)).toHaveLength(1);
    });

    it('an attempt in flight when the endpoint is disabled is kept in the log; the event stays held', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      // The first POST is answered 500 only after the disable has held its event (4 s, within the
      // 5 s time-out, leaves a loaded machine time for the disable and the read below).
      receiver.respondWith({ status: 500, delayMs: 4_000 });
      const id = await oneEvent(account);
      await receiver.waitForCount(id, 1);
      await patch(account, { status: 'disabled' });
      expect(await event(account, id)).toMatchObject({ delivery_status: 'held', attempt_count: 0 });
      const logged = await waitFor(
        () => event(account, id),
        (e) => e.attempt_count === 1,
        'the in-flight attempt logged',
        10_000,
      );
      expect(logged).toMatchObject({ delivery_status: 'held', next_attempt_at: null, last_response_status: 500 });
      await sleep(QUIET_MS);
      expect(receiver.for(id)).toHaveLength(1);
      expect((await endpoint(account)).held_count).toBe(1);
    });

    it('a client disable holds the events still retrying, their attempts kept; enabling sends them again', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      // Each failure answered after 300 ms: the change below lands while the event still retries
      // (four quick failures would end its schedule first on a slow machine).
      receiver.respondWith({ status: 500, delayMs: 300 });
      const id = await oneEvent(account);
      await waitFor(
        () => event(account, id),
        (e) => e.attempt_count >= 1,
        'a first attempt recorded',
      );
      const disabled = await patch(account, { status: 'disabled' });
      expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'client' });
      const held = await waitFor(
        () => event(account, id),
        (e) => e.delivery_status === 'held',
        'held',
      );
      expect(held.next_attempt_at).toBeNull();
      expect(held.attempt_count).toBeGreaterThanOrEqual(1);
      const sent = receiver.for(id).length;
      await sleep(QUIET_MS);
      expect(receiver.for(id)).toHaveLength(sent);
      expect((await endpoint(account)).held_count).toBe(1);

      // Disabling again keeps the first reason and time.
      const again = await patch(account, { status: 'disabled' });
      expect(again.disabled_at).toBe(disabled.disabled_at);

      receiver.respondWith({ status: 200 });
      await patch(account, { status: 'enabled' });
      const delivered = await waitFor(
        () => event(account, id),
        (e) => e.delivery_status === 'delivered',
        'delivered',
      );
      expect(delivered.attempt_count).toBe(sent + 1);
      expect(receiver.for(id).every((r) => r.headers['webhook-id'] === id)).toBe(true);
    });

    it('the worker holds, unsent, an event still pending when it finds the endpoint disabled (one committed after the disable held the others)', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      // Each failure answered after 300 ms: the change below lands while the event still retries
      // (four quick failures would end its schedule first on a slow machine).
      receiver.respondWith({ status: 500, delayMs: 300 });
      const id = await oneEvent(account);
      await waitFor(
        () => event(account, id),
        (e) => e.attempt_count >= 1,
        'a first attempt recorded',
      );
      // As if the event had committed just after a disable held the account's pending events.
      await t.db.query(
        `INSERT INTO webhook_endpoints (account_id, disabled_reason, disabled_at) VALUES ($1, 'client', now())`,
        [account.id],
      );
      const held = await waitFor(
        () => event(account, id),
        (e) => e.delivery_status === 'held',
        'held by the worker',
      );
      expect(held.next_attempt_at).toBeNull();
      const sent = receiver.for(id).length;
      await sleep(QUIET_MS);
      expect(receiver.for(id)).toHaveLength(sent);

      receiver.respondWith({ status: 200 });
      await patch(account, { status: 'enabled' });
      await waitFor(
        () => event(account, id),
        (e) => e.delivery_status === 'delivered',
        'delivered after enabling',
      );
    });

    it('disables an endpoint failing longer than WEBHOOK_DISABLE_AFTER once an event uses up its schedule; that event stays failed', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      receiver.respondWith({ status: 500 });
      const id = await oneEvent(account);
      const failed = await waitFor(
        () => event(account, id),
        (e) => e.delivery_status === 'failed',
        'failed',
        30_000,
      );
      expect(failed.attempt_count).toBe(4);
      const disabled = await waitFor(
        () => endpoint(account),
        (e) => e.status === 'disabled',
        'disabled',
      );
      expect(disabled).toMatchObject({ disabled_reason: 'failing', held_count: 0 });
      expect(disabled.health.consecutive_failures).toBe(4);
      // The worker logs it once its transaction has committed: the API can show the change first.
      await waitFor(
        async () => t.output.join(''),
        (output) => output.includes(`webhook endpoint of account ${account.id} disabled: failing`),
        'the disable logged',
        5_000,
      );
      expect((await event(account, id)).delivery_status).toBe('failed');

      // The dashboard's Retry on its failed job is refused with that reason; the job stays failed.
      const job = `/admin/queues/api/queues/webhook-deliveries/${encodeURIComponent(`${id}:1`)}`;
      const basic = `Basic ${Buffer.from(`admin:${t.adminToken}`).toString('base64')}`;
      const failedJob = await waitFor(
        () => t.http.get(job).set('authorization', basic),
        (res) => res.body?.status === 'failed',
        'the failed job',
      );
      expect(failedJob.body.job.failedReason).toMatch(/^gave up after 4 attempts: HTTP 500/);
      const retry = await t.http.put(`${job}/retry`).set('authorization', basic);
      expectError(retry, 409, 'endpoint_disabled');
      expect(retry.body.error.message).toMatch(/disabled \(failing\)/);
      expect((await t.http.get(job).set('authorization', basic)).body.status).toBe('failed');
      expect((await event(account, id)).delivery_status).toBe('failed');
    });

    it('an operator reads the endpoint in the admin account and disables/enables it (reason operator)', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      const read = await admin(t.http.get(`/api/v1/admin/accounts/${account.id}`));
      expect(read.status).toBe(200);
      expect(read.body.webhook_endpoint).toEqual(await endpoint(account));

      const res = await admin(t.http.patch(`/api/v1/admin/accounts/${account.id}/webhook-endpoint`)).send({
        status: 'disabled',
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'webhook_endpoint', status: 'disabled', disabled_reason: 'operator' });
      expect((await endpoint(account)).disabled_reason).toBe('operator');
      await waitFor(
        async () => t.output.join(''),
        (output) => output.includes(`webhook endpoint of account ${account.id} disabled: operator`),
        'the disable logged',
        5_000,
      );

      const held = await oneEvent(account);
      expect((await event(account, held)).delivery_status).toBe('held');
      const enabled = await admin(t.http.patch(`/api/v1/admin/accounts/${account.id}/webhook-endpoint`)).send({
        status: 'enabled',
      });
      expect(enabled.body).toMatchObject({ status: 'enabled', disabled_reason: null });
      await receiver.waitForCount(held, 1);

      expectError(
        await admin(t.http.patch(`/api/v1/admin/accounts/0193a6f2-0000-7000-8000-000000000001/webhook-endpoint`)).send({
          status: 'disabled',
        }),
        404,
        'not_found',
      );
      expectError(
        await as(account, t.http.patch(`/api/v1/admin/accounts/${account.id}/webhook-endpoint`)),
        401,
        'unauthorized',
      );
    });

    it('a new url (client route or admin account PATCH) enables the endpoint, starts its health afresh and sends the held events there', async () => {
      const second = await WebhookReceiver.start('/moved');
      try {
        const account = await createAccount(t, { webhook_url: receiver.url });
        receiver.respondWith({ status: 410 });
        const gone = await oneEvent(account);
        await waitFor(
          () => endpoint(account),
          (e) => e.status === 'disabled',
          'disabled',
        );
        const held = await oneEvent(account);

        const moved = await patch(account, { url: second.url });
        expect(moved).toMatchObject({ url: second.url, status: 'enabled', disabled_reason: null });
        expect(moved.health).toEqual({
          last_success_at: null,
          last_failure_at: null,
          failing_since: null,
          consecutive_failures: 0,
        });
        await second.waitForCount(gone, 1);
        await second.waitForCount(held, 1);
        expect(receiver.for(held)).toHaveLength(0);
        const adminView = await admin(t.http.get(`/api/v1/admin/accounts/${account.id}`));
        expect(adminView.body.webhook_url).toBe(second.url);

        // The same through the admin API's account update.
        second.respondWith({ status: 410 });
        const goneAgain = await oneEvent(account);
        await waitFor(
          () => endpoint(account),
          (e) => e.status === 'disabled',
          'disabled again',
        );
        // receiver answered 410 above: it answers 200 before the move releases the event to it.
        receiver.respondWith({ status: 200 });
        const res = await admin(t.http.patch(`/api/v1/admin/accounts/${account.id}`)).send({
          webhook_url: receiver.url,
        });
        expect(res.status).toBe(200);
        await receiver.waitForCount(goneAgain, 1);
        expect((await endpoint(account)).status).toBe('enabled');

        // The same url again is no change: a disabled endpoint stays disabled.
        await patch(account, { status: 'disabled' });
        expect((await patch(account, { url: receiver.url })).status).toBe('disabled');
      } finally {
        await second.close();
      }
    });

    it('refuses bad input with 400 validation_failed and changes nothing', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      const before = await endpoint(account);
      const bad: [object, string][] = [
        [{ status: 'paused' }, 'status'],
        [{ status: null }, 'status'],
        [{ status: 1 }, 'status'],
        [{ url: 42 }, 'url'],
        [{ url: 'ftp://client.example/hook' }, 'url'],
        [{ url: 'not a url' }, 'url'],
        [{ url: `https://user:pw@client.example/hook` }, 'url'],
        [{ url: `https://${'a'.repeat(250)}.example/hook` }, 'url'],
        [{ enabled: true }, 'enabled'],
        [{ status: 'disabled', account_id: account.id }, 'account_id'],
      ];
      for (const [body, field] of bad) {
        expectError(await as(account, t.http.patch(ENDPOINT)).send(body), 400, 'validation_failed', field);
      }
      expectError(await as(account, t.http.patch(`${ENDPOINT}?status=disabled`)).send({}), 400, 'validation_failed');
      expectError(
        await admin(t.http.patch(`/api/v1/admin/accounts/${account.id}/webhook-endpoint`)).send({ status: 'gone' }),
        400,
        'validation_failed',
        'status',
      );
      expect(await endpoint(account)).toEqual(before);
      expectError(await t.http.get(ENDPOINT), 401, 'unauthorized');
      expectError(await admin(t.http.get(ENDPOINT)), 401, 'unauthorized');
      expectError(await as(account, t.http.post(ENDPOINT)).send({}), 405, 'method_not_allowed');
    });
  });

  describe('with WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT=1', () => {
    beforeAll(async () => {
      receiver = await WebhookReceiver.start();
      t = await startApp({
        QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_endpoint_order`,
        WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '1',
        OUTBOX_SWEEP_INTERVAL_MS: '300',
      });
    });

    afterAll(async () => {
      await t.close();
      await receiver.close();
    });

    it('releases 60 held events oldest first: they arrive exactly in creation order, each once, with its own webhook-id', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      await patch(account, { status: 'disabled' });
      const created: string[] = [];
      for (let i = 0; i < 60; i++) created.push(await oneEvent(account));
      expect((await endpoint(account)).held_count).toBe(60);
      await sleep(500);
      expect(receiver.requests).toHaveLength(0);

      await patch(account, { status: 'enabled' });
      await receiver.waitFor((requests) => requests.length >= 60, 30_000, '60 released events');
      await sleep(500);
      const arrived = receiver.requests.map((r) => String(r.headers['webhook-id']));
      expect(arrived).toEqual(created);
      const log = await events(account);
      expect(log.every((e) => e.delivery_status === 'delivered')).toBe(true);
      expect((await endpoint(account)).held_count).toBe(0);
    }, 180_000);

    it('a release racing new events loses none and sends none twice', async () => {
      const account = await createAccount(t, { webhook_url: receiver.url });
      await patch(account, { status: 'disabled' });
      const held: string[] = [];
      for (let i = 0; i < 20; i++) held.push(await oneEvent(account));
      const verifications = await Promise.all(Array.from({ length: 20 }, () => createVerification(t, account.id)));
      const [, ...moved] = await Promise.all([
        patch(account, { status: 'enabled' }),
        ...verifications.map((v) => transition(t, v.id, { status: 'processing' })),
      ]);
      expect(moved).toHaveLength(20);
      const all = await waitFor(
        () => events(account),
        (list) => list.length === 40 && list.every((e) => e.delivery_status === 'delivered'),
        'every event delivered',
        30_000,
      );
      await sleep(500);
      for (const e of all) expect(receiver.for(e.id)).toHaveLength(1);
      // The held ones still go out oldest first among themselves.
      const heldArrivals = receiver.requests
        .map((r) => String(r.headers['webhook-id']))
        .filter((id) => held.includes(id));
      expect(heldArrivals).toEqual(held);
    }, 180_000);
  });
});
