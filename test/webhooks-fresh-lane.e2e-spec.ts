import { createAccount, createVerificationInStatus } from './helpers/factories';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const ACCOUNTS = 100;
const PER_ACCOUNT = 8;
const BACKLOG = ACCOUNTS * PER_ACCOUNT;

/**
 * A client's fresh status change does not wait behind maintenance traffic: with 800 relayed events
 * of 100 other accounts queued ahead of it (a Redis outage's backlog, draining at about 13/s here:
 * 4 deliveries at a time to an endpoint that answers in 300 ms), its webhook goes out next, long
 * before the backlog is half through. Without the fresh lane it would wait for the whole queue.
 */
describe('fresh lane', () => {
  let t: TestApp;
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;

  beforeAll(async () => {
    slow = await WebhookReceiver.start();
    slow.respondWith({ status: 200, delayMs: 300 });
    fast = await WebhookReceiver.start();
    t = await startApp({ WEBHOOK_CONCURRENCY: '4', OUTBOX_SWEEP_INTERVAL_MS: '500', LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await t?.kill();
    await slow?.close();
    await fast?.close();
  });

  it("delivers a client's status change ahead of a relayed backlog", async () => {
    const client = await createAccount(t, { webhook_url: fast.url });
    // Ten at a time: a hundred creates at once can wait more than the pool's 1 s for a connection (503)
    // on a loaded machine.
    const others: Awaited<ReturnType<typeof createAccount>>[] = [];
    for (let i = 0; i < ACCOUNTS; i += 10) {
      const batch = Array.from({ length: Math.min(10, ACCOUNTS - i) }, () =>
        createAccount(t, { webhook_url: slow.url }),
      );
      others.push(...(await Promise.all(batch)));
    }
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
       SELECT gen_random_uuid(), a, gen_random_uuid(), 'verification.status_changed', '{}',
              now() - interval '1 minute', 'pending', now() - interval '1 minute' + n * interval '1 ms'
         FROM generate_series(1, ${PER_ACCOUNT}) AS n CROSS JOIN unnest($1::uuid[]) AS a`,
      [others.map((a) => a.id)],
    );
    // The relay has queued the backlog and the worker is busy with it.
    await slow.waitFor((requests) => requests.length >= 8, 30_000, 'the backlog under way');

    const verification = await createVerificationInStatus(t, client.id, 'processing');
    await fast.waitFor(
      (requests) => requests.some((r) => r.body.includes(verification.id)),
      60_000,
      "the client's status change",
    );
    // Delivered while most of the backlog still waits (it had all of it ahead in the queue).
    expect(slow.requests.length).toBeLessThan(BACKLOG / 2);
  }, 120_000);
});
