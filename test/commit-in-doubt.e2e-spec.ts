import Queue from 'bull';
import { Client } from 'pg';
import { runMigrations } from 'src/database/migration-runner';
import { DeliveryGaveUp, DeliveryRetry, retryBackoff } from 'src/webhooks/queue/delivery-retry';
import { DELIVERY_QUEUE, DELIVERY_QUEUE_SETTINGS, RETRY_BACKOFF } from 'src/webhooks/queue/webhook-queue.constants';
import { createAccount, createVerification, createVerificationInStatus } from './helpers/factories';
import { waitFor } from './helpers/poll';
import { type LonePrimary, startLonePrimary } from './helpers/postgres-cluster';
import { type TestApp, startApp } from './helpers/test-app';

const DATABASE = 'kyc_in_doubt_test';

/**
 * Writes whose COMMIT answer is lost are answered as they went, never with a 503 that hides a
 * commit. The server is a throwaway PostgreSQL of the test's own, told to wait for a synchronous
 * standby that does not exist: every COMMIT that wrote something then hangs, committed locally but
 * unconfirmed — what a primary whose standby vanished, or whose WAL flush stalls, does — until the
 * service's own query time-out (2.5 s) gives up on the answer.
 */
describe('a write whose commit answer is lost', () => {
  let cluster: LonePrimary;
  let t: TestApp;
  const onPrimary = async <T>(sql: string, params: unknown[] = [], database = DATABASE): Promise<T[]> => {
    const client = new Client({ connectionString: cluster.primary.url(database) });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };
  const commitsHang = async (hang: boolean): Promise<void> => {
    await onPrimary(`ALTER SYSTEM SET synchronous_standby_names = '${hang ? 'nobody' : ''}'`, [], 'postgres');
    await onPrimary('SELECT pg_reload_conf()', [], 'postgres');
    await new Promise((resolve) => setTimeout(resolve, 200));
  };
  const internal = (path: string) =>
    t.http.post(`/api/v1/internal/kyc/${path}`).set('authorization', `Bearer ${t.internalToken}`);

  beforeAll(async () => {
    cluster = await startLonePrimary();
    await onPrimary(`CREATE DATABASE ${DATABASE}`, [], 'postgres');
    await runMigrations(cluster.primary.url(DATABASE));
    t = await startApp({
      DATABASE_URL: cluster.primary.url(DATABASE),
      APP_ROLE: 'api',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'info',
      // Half of it is the time the service gives itself to settle a lost commit answer.
      HTTP_REQUEST_TIMEOUT_MS: '6000',
    });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    cluster?.close();
  });

  it('answers 200 or 201 with the result when it committed: a status change, a create, a rotation, a test event, a redaction', async () => {
    const account = await createAccount(t, { webhook_url: null });
    // Another account's rotation: it locks its account row, which the others' inserts hold a lock on.
    const rotating = await createAccount(t, { webhook_url: null });
    const moving = await createVerificationInStatus(t, account.id, 'processing');
    const erased = await createVerification(t, account.id, { external_user_id: 'erase-me' });
    const auth = `Bearer ${account.secret}`;

    await commitsHang(true);
    const [moved, created] = await Promise.all([
      internal(`verifications/${moving.id}/transitions`).send({ status: 'approved' }),
      internal('verifications').send({ account_id: account.id, external_user_id: 'in-doubt' }),
    ]);
    // One after the other: each of these is followed or accompanied by a NOTIFY (a new event's
    // wake-up of the event streams, a credential change's of the caches), and PostgreSQL commits one
    // NOTIFY at a time: with every commit hanging, a second would wait on the first's, time out and
    // roll back (an honest 503, not what this tests).
    const testEvent = await t.http
      .post('/api/v1/public/kyc/webhook-events/test')
      .set('authorization', auth)
      .send({ status: 'approved' });
    const redacted = await t.http
      .post(`/api/v1/public/kyc/verifications/${erased.id}/redact`)
      .set('authorization', auth);
    const rotated = await t.http
      .post(`/api/v1/admin/accounts/${rotating.id}/secret/rotate`)
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ grace_period_seconds: 0 });
    const newAccount = await t.http
      .post('/api/v1/admin/accounts')
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ name: 'in doubt' });
    await commitsHang(false);

    expect(
      [moved, created, rotated, newAccount, testEvent, redacted].map((res) => [res.status, res.body.error?.details]),
    ).toEqual([
      [200, undefined],
      [201, undefined],
      [200, undefined],
      [201, undefined],
      [202, undefined],
      [200, undefined],
    ]);
    // Each answer is what the database holds.
    expect(moved.body).toMatchObject({ id: moving.id, status: 'approved', version: 3 });
    const [row] = await onPrimary<{ status: string; version: number }>(
      'SELECT status, version FROM verifications WHERE id = $1',
      [moving.id],
    );
    expect(row).toEqual({ status: 'approved', version: 3 });
    expect(await onPrimary('SELECT 1 FROM verifications WHERE id = $1', [created.body.id])).toHaveLength(1);
    expect(await onPrimary('SELECT 1 FROM accounts WHERE id = $1', [newAccount.body.id])).toHaveLength(1);
    expect(await onPrimary('SELECT 1 FROM webhook_events WHERE id = $1', [testEvent.body.id])).toHaveLength(1);
    expect(redacted.body).toMatchObject({ external_user_id: '[redacted]' });
    // The rotation committed with grace 0: the secret it answered is the only one that works.
    const withNew = await t.http
      .get('/api/v1/public/kyc/verifications')
      .set('authorization', `Bearer ${rotated.body.webhook_secret}`);
    const withOld = await t.http
      .get('/api/v1/public/kyc/verifications')
      .set('authorization', `Bearer ${rotating.secret}`);
    expect([withNew.status, withOld.status]).toEqual([200, 401]);
    expect(t.output.join('')).toMatch(/commit answer was lost .*on the primary: committed/);
    expect(t.output.join('')).not.toMatch(/internal_error/);
  }, 60_000);

  it('answers 200 or 202 with the result when it committed: an endpoint change, an account update, a redelivery, a bulk redelivery', async () => {
    const account = await createAccount(t, { webhook_url: 'https://hooks.example.com/kyc' });
    const other = await createAccount(t, { webhook_url: 'https://hooks.example.com/other' });
    const v = await createVerification(t, account.id);
    const dead = await createVerification(t, account.id);
    await internal(`verifications/${v.id}/transitions`).send({ status: 'processing' }).expect(200);
    await internal(`verifications/${dead.id}/transitions`).send({ status: 'processing' }).expect(200);
    const [event] = await onPrimary<{ id: string }>('SELECT id FROM webhook_events WHERE verification_id = $1', [v.id]);
    // No worker runs here: the second event is made failed by hand, for the bulk redelivery to find.
    await onPrimary(`UPDATE webhook_events SET delivery_status = 'failed' WHERE verification_id = $1`, [dead.id]);
    const client = (secret: string) => ({ authorization: `Bearer ${secret}` });

    await commitsHang(true);
    // One after the other, as in the test above.
    const redelivered = await t.http
      .post(`/api/v1/public/kyc/webhook-events/${event.id}/redeliver`)
      .set(client(account.secret));
    const bulk = await t.http
      .post('/api/v1/public/kyc/webhook-events/redeliver')
      .set(client(account.secret))
      .send({ delivery_status: 'failed' });
    const patched = await t.http
      .patch('/api/v1/public/kyc/webhook-endpoint')
      .set(client(account.secret))
      .send({ status: 'disabled' });
    const renamed = await t.http
      .patch(`/api/v1/admin/accounts/${other.id}`)
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ name: 'renamed in doubt' });
    await commitsHang(false);

    expect([redelivered, bulk, patched, renamed].map((res) => [res.status, res.body.error?.details])).toEqual([
      [202, undefined],
      [202, undefined],
      [200, undefined],
      [200, undefined],
    ]);
    expect(bulk.body).toEqual({ object: 'redelivery', count: 1 });
    expect(patched.body).toMatchObject({ status: 'disabled', disabled_reason: 'client' });
    expect(renamed.body).toMatchObject({ name: 'renamed in doubt' });
    const [cycle] = await onPrimary<{ cycle: number }>('SELECT cycle FROM webhook_events WHERE id = $1', [event.id]);
    expect(cycle.cycle).toBe(2);
    const [named] = await onPrimary<{ name: string }>('SELECT name FROM accounts WHERE id = $1', [other.id]);
    expect(named.name).toBe('renamed in doubt');
    const actions = await onPrimary<{ action: string }>(
      `SELECT action FROM audit_pending WHERE account_id = ANY($1::uuid[])
       UNION ALL SELECT action FROM audit_events WHERE account_id = ANY($1::uuid[])`,
      [[account.id, other.id]],
    );
    expect(actions.map((a) => a.action).sort()).toEqual(
      expect.arrayContaining([
        'account.updated',
        'webhook_endpoint.updated',
        'webhook_event.redelivered',
        'webhook_events.bulk_redelivered',
      ]),
    );
    expect(t.output.join('')).not.toMatch(/internal_error/);
  }, 60_000);

  it('answers as committed the operator routes that change something: a key issued and revoked, a legal hold placed and released', async () => {
    const account = await createAccount(t, { webhook_url: null });
    const v = await createVerification(t, account.id);
    const admin = <T extends { set(name: string, value: string): T }>(req: T): T =>
      req.set('authorization', `Bearer ${t.adminToken}`);
    const hold = `/api/v1/admin/verifications/${v.id}/legal-hold`;

    await commitsHang(true);
    const issued = await admin(t.http.post('/api/v1/admin/operator-keys')).send({ name: 'in doubt', role: 'viewer' });
    const placed = await admin(t.http.put(hold)).send({ reason: 'AML record keeping' });
    await commitsHang(false);
    expect([issued.status, placed.status]).toEqual([201, 200]);
    await commitsHang(true);
    const revoked = await admin(t.http.delete(`/api/v1/admin/operator-keys/${issued.body.id}`));
    const released = await admin(t.http.delete(hold));
    await commitsHang(false);
    expect([revoked.status, released.status]).toEqual([204, 204]);

    const [key] = await onPrimary<{ revoked: boolean }>(
      'SELECT revoked_at IS NOT NULL AS revoked FROM operator_keys WHERE id = $1',
      [issued.body.id],
    );
    expect(key).toEqual({ revoked: true });
    expect(await onPrimary('SELECT 1 FROM verification_legal_holds WHERE verification_id = $1', [v.id])).toEqual([]);
    const actions = await onPrimary<{ action: string }>(
      `SELECT action FROM audit_pending WHERE target_id = ANY($1) UNION ALL SELECT action FROM audit_events WHERE target_id = ANY($1)`,
      [[issued.body.id, v.id]],
    );
    expect(actions.map((a) => a.action).sort()).toEqual([
      'operator_key.created',
      'operator_key.revoked',
      'verification.legal_hold_placed',
      'verification.legal_hold_released',
    ]);
    expect(t.output.join('')).not.toMatch(/internal_error/);
  }, 60_000);

  /** A queue of the test's on the service's delivery queue (no worker runs here). */
  const testQueue = () =>
    new Queue(DELIVERY_QUEUE, process.env.REDIS_URL as string, {
      prefix: process.env.QUEUE_PREFIX,
      settings: { ...DELIVERY_QUEUE_SETTINGS, backoffStrategies: { [RETRY_BACKOFF]: retryBackoff } },
    });
  /** A status change's first delivery job, run once by the test's queue, which throws `error`: the event's id, once
   * the job is `state` (the Failed tab's, or the Delayed tab's). */
  const firstJobEnded = async (error: Error, state: 'failed' | 'delayed'): Promise<string> => {
    const account = await createAccount(t, { webhook_url: 'https://hooks.example.com/dashboard' });
    const v = await createVerification(t, account.id);
    await internal(`verifications/${v.id}/transitions`).send({ status: 'processing' }).expect(200);
    const [event] = await onPrimary<{ id: string }>('SELECT id FROM webhook_events WHERE verification_id = $1', [v.id]);
    const queue = testQueue();
    try {
      void queue.process('*', async () => {
        throw error;
      });
      const job = async () => (await queue.getJob(`${event.id}:1`))?.getState();
      await waitFor(job, (now) => now === state, `the cycle job ${state}`);
    } finally {
      await queue.close();
    }
    return event.id;
  };
  /** The dashboard's button on the event's first job, pressed while every COMMIT hangs. */
  const pressWhileCommitsHang = async (eventId: string, button: 'retry' | 'promote') => {
    const basic = Buffer.from(`admin:${t.adminToken}`).toString('base64');
    await commitsHang(true);
    try {
      return await t.http
        .put(`/admin/queues/api/queues/${DELIVERY_QUEUE}/${encodeURIComponent(`${eventId}:1`)}/${button}`)
        .set('authorization', `Basic ${basic}`);
    } finally {
      await commitsHang(false);
    }
  };

  it("answers the dashboard's Retry as it went: 204 once the new cycle is found committed", async () => {
    const id = await firstJobEnded(new DeliveryGaveUp('gave up after 8 attempts: HTTP 500'), 'failed');
    const retried = await pressWhileCommitsHang(id, 'retry');
    expect([retried.status, retried.body.error?.details]).toEqual([204, undefined]);
    const [row] = await onPrimary<{ cycle: number }>('SELECT cycle FROM webhook_events WHERE id = $1', [id]);
    expect(row.cycle).toBe(2);
    expect(t.output.join('')).not.toMatch(/internal_error/);
  }, 60_000);

  it("answers the dashboard's Promote as it went: 204, the attempt due now and its job promoted", async () => {
    // Put off for an hour, as a retry would, with the event's next attempt an hour away: the Delayed tab's Promote.
    const id = await firstJobEnded(new DeliveryRetry(3_600_000, 'HTTP 500: next attempt in 1h'), 'delayed');
    await onPrimary("UPDATE webhook_events SET next_attempt_at = now() + interval '1 hour' WHERE id = $1", [id]);
    const promoted = await pressWhileCommitsHang(id, 'promote');
    expect([promoted.status, promoted.body.error?.details]).toEqual([204, undefined]);
    const [row] = await onPrimary<{ due: boolean }>(
      'SELECT next_attempt_at <= now() AS due FROM webhook_events WHERE id = $1',
      [id],
    );
    expect(row.due).toBe(true);
    const queue = testQueue();
    try {
      expect(await (await queue.getJob(`${id}:1`))?.getState()).toBe('waiting');
    } finally {
      await queue.close();
    }
    expect(t.output.join('')).not.toMatch(/internal_error/);
  }, 60_000);

  it('answers 503 when the write did not commit: its session ended before the COMMIT', async () => {
    const account = await createAccount(t, { webhook_url: null });
    const held = await createVerificationInStatus(t, account.id, 'processing');
    // A session of the test's holds the row, so the service's change waits on the lock; the test
    // then ends the service's session while it waits: the change cannot have committed.
    const locker = new Client({ connectionString: cluster.primary.url(DATABASE) });
    await locker.connect();
    // One session that watches, polling every 10 ms: the change waits on the lock for at most the
    // service's lock_timeout (500 ms), and a new connection per look could miss that window.
    const observer = new Client({ connectionString: cluster.primary.url(DATABASE) });
    await observer.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM verifications WHERE id = $1 FOR UPDATE', [held.id]);
      let settled = false;
      const answer = internal(`verifications/${held.id}/transitions`)
        .send({ status: 'approved' })
        .then((res) => {
          settled = true;
          return res;
        });
      let waiter: number | undefined;
      while (waiter === undefined && !settled) {
        const { rows } = await observer.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> $2`,
          [DATABASE, (locker as unknown as { processID: number }).processID],
        );
        waiter = rows[0]?.pid;
        if (waiter === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (waiter === undefined) throw new Error('the change was answered before it was seen waiting on the lock');
      await observer.query('SELECT pg_terminate_backend($1)', [waiter]);
      const res = await answer;
      expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([
        503,
        'service_unavailable',
        [{ field: 'postgres', issue: 'down' }],
      ]);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
      await observer.end();
    }
    const [row] = await onPrimary<{ status: string }>('SELECT status FROM verifications WHERE id = $1', [held.id]);
    expect(row.status).toBe('processing');
  }, 30_000);

  it('answers 503 commit unknown only when no primary can be reached before the deadline', async () => {
    const account = await createAccount(t, { webhook_url: null });
    const verification = await createVerificationInStatus(t, account.id, 'processing');
    await commitsHang(true);
    const answer = internal(`verifications/${verification.id}/transitions`)
      .send({ status: 'approved' })
      .then((res) => res);
    await waitFor(
      async () => onPrimary(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND wait_event = 'SyncRep'`, [DATABASE]),
      (rows) => rows.length > 0,
      'the COMMIT waiting for the standby',
    );
    cluster.primary.stopImmediate();
    const res = await answer.catch((error: Error) => {
      throw new Error(`${error.message}\n${t.output.join('')}`);
    });
    expect([res.status, res.body.error?.code, res.body.error?.details]).toEqual([
      503,
      'service_unavailable',
      [{ field: 'commit', issue: 'unknown' }],
    ]);
  }, 60_000);
});
