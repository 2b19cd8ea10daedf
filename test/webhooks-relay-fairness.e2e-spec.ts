import Queue from 'bull';
import { DELIVERY_QUEUE } from 'src/webhooks/queue/webhook-queue.constants';
import { createAccount } from './helpers/factories';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/** A's backlog: more overdue events than many relay passes take (each pass relays at most 500), and than
 * they set aside (those of an account with no room) in the seconds before B's event is overdue. */
const BACKLOG = 100_000;
/** The most events a relay pass takes. */
const PASS = 500;

/**
 * The relay (events due with no queue job) takes accounts in turn: one account's backlog of overdue
 * events never fills every relay pass, so another account's event whose job was lost is relayed at
 * the next pass, ahead of the older part of that backlog. The check is on order, not on time: when
 * B's event arrives, some of A's events, overdue long before it, have still never been relayed (an
 * oldest-first relay would have relayed every one of them first). Nor does A's backlog go round the
 * queue: once A holds all its slots, the relay queues none of A's events, and they wait their turn
 * in the database, so B's event is not queued behind A's events that a worker would only set aside.
 */
describe('relay fairness', () => {
  let t: TestApp;
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;

  beforeAll(async () => {
    [slow, fast] = await Promise.all([WebhookReceiver.start('/slow'), WebhookReceiver.start('/fast')]);
    slow.respondWith({ hang: true });
    // A's deliveries hang for the whole test: none of them ends and lets anything through.
    t = await startApp({ OUTBOX_SWEEP_INTERVAL_MS: '500', WEBHOOK_TIMEOUT_MS: '600000', LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await t?.kill();
    await Promise.all([slow?.close(), fast?.close()]);
  });

  it(`relays B's lost event ahead of the older part of A's ${BACKLOG.toLocaleString('en')} overdue events`, async () => {
    const a = await createAccount(t, { webhook_url: slow.url });
    const b = await createAccount(t, { webhook_url: fast.url });
    // A's backlog: overdue for an hour (its jobs are made by the relay, then wait behind its in-flight cap).
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}',
              now() - interval '1 hour', 'pending', now() - interval '1 hour' + n * interval '1 ms'
         FROM generate_series(1, $2::int) AS n`,
      [a.id, BACKLOG],
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
    // The wait only guards against a hang: an oldest-first relay gets to B after all of A's backlog
    // (minutes here), and the count below then finds none of A's left.
    await fast.waitFor((requests) => requests.some((r) => r.headers['webhook-id'] === id), 90_000, "B's relayed event");
    const neverRelayed = async (): Promise<number> => {
      // Still due at its seeded time, an hour back: relaying moves it to the relay's time, parking clears it.
      const sql = `SELECT count(*)::int AS n FROM webhook_events
                    WHERE account_id = $1 AND delivery_status = 'pending' AND next_attempt_at < now() - interval '30 minutes'`;
      return (await t.db.query<{ n: number }>(sql, [a.id])).rows[0].n;
    };
    const left = await neverRelayed();
    console.log(
      `B's event arrived after ${Date.now() - started} ms; ${left} of A's ${BACKLOG} were never relayed then`,
    );
    expect(left).toBeGreaterThan(0);
    // None of A's deliveries ended (nothing of A's went through because one of its slots freed up).
    expect(slow.requests).toHaveLength(8);
    // A's jobs in the queue, in any state: what the first passes queued while its slots filled (at most
    // 32 a pass; 64 in every local run), never a pass's worth of its backlog (2,213 with the relay before).
    const queue = new Queue(DELIVERY_QUEUE, process.env.REDIS_URL as string, { prefix: process.env.QUEUE_PREFIX });
    try {
      const jobs = await queue.getJobs(['waiting', 'active', 'delayed', 'completed', 'failed', 'paused']);
      expect(jobs.filter((job) => job?.data.accountId === a.id).length).toBeLessThan(PASS);
    } finally {
      await queue.close();
    }
  }, 120_000);
});
