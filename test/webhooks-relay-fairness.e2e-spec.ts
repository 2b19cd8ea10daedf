import { createAccount } from './helpers/factories';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * The relay (events due with no queue job) takes accounts in turn: one account's backlog of overdue
 * events, whose jobs are deferred behind its in-flight cap, never fills every relay pass, so another
 * account's event whose job was lost is relayed at the next pass.
 */
describe('relay fairness', () => {
  let t: TestApp;
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;

  beforeAll(async () => {
    [slow, fast] = await Promise.all([WebhookReceiver.start('/slow'), WebhookReceiver.start('/fast')]);
    slow.respondWith({ hang: true });
    t = await startApp({ OUTBOX_SWEEP_INTERVAL_MS: '500', WEBHOOK_TIMEOUT_MS: '60000', LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await t?.kill();
    await Promise.all([slow?.close(), fast?.close()]);
  });

  it("relays B's lost event at the next pass while A has 1,000 overdue events", async () => {
    const a = await createAccount(t, { webhook_url: slow.url });
    const b = await createAccount(t, { webhook_url: fast.url });
    // A's backlog: overdue for an hour (its jobs are made by the relay, then deferred behind its cap).
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}',
              now() - interval '1 hour', 'pending', now() - interval '1 hour' + n * interval '1 ms'
         FROM generate_series(1, 1000) AS n`,
      [a.id],
    );
    // The relay's jobs go in the maintenance lane: 8 of the account's 10 slots.
    await slow.waitFor((requests) => requests.length >= 8, 20_000, "A's deliveries in flight");
    // B's event, as if its job was lost (Redis down at its commit): pending, due, no job.
    const [{ id }] = (
      await t.db.query<{ id: string }>(
        `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
         VALUES (gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}', now(), 'pending', now())
         RETURNING id`,
        [b.id],
      )
    ).rows;
    const started = Date.now();
    await fast.waitFor((requests) => requests.some((r) => r.headers['webhook-id'] === id), 30_000, "B's relayed event");
    // Overdue after 3 s, then relayed at the next pass (every 0.5 s here), behind the jobs of A's already
    // relayed: well under the minute an unfair relay (A's 1,000 overdue events first) would take.
    const after = Date.now() - started;
    console.log(`B's event relayed and delivered after ${after} ms`);
    // An unfair relay takes about a minute here. 20 s is the margin for a loaded two-core machine: the
    // same wait took 5.7-10.5 s on one on 2026-11-30, with this build and the one before it.
    expect(after).toBeLessThan(20_000);
  }, 60_000);
});
