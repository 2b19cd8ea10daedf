import { type CreatedAccount, createAccount, insertHeldEvents } from './helpers/factories';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * An account's waiting events are let through by one promotion at a time (an advisory lock per
 * account). When one is under way for long (a release of many events, a slow commit), the account's
 * attempts that end meanwhile do not wait for it: each would hold a pooled connection up to the lock
 * time-out and then fail with a warning, while the promotion under way fills the room it sees. The
 * test holds the account's lock itself across the ends of the attempts in flight, then lets go:
 * no attempt's end waited on it, and every event is delivered once.
 */

const ENDPOINT = '/api/v1/public/kyc/webhook-endpoint';
const EVENTS = 40;
// The first key of the promotions' advisory lock (src/webhooks/tables/webhook-event.repository.ts).
const PROMOTION_LOCK = 7_277_004;

describe("an account's promotion under way", () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  const as = (account: CreatedAccount) => ({ authorization: `Bearer ${account.secret}` });

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({ LOG_LEVEL: 'warn', OUTBOX_SWEEP_INTERVAL_MS: '1000' });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it("is not waited for by the attempts that end meanwhile; its account's events are all delivered", async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    expect((await t.http.patch(ENDPOINT).set(as(account)).send({ status: 'disabled' })).status).toBe(200);
    await insertHeldEvents(t, account.id, EVENTS, '1 hour');
    // Each attempt takes a second, so the test can take the lock while the first ones are in flight.
    receiver.respondWith({ status: 204, delayMs: 1_000 });
    expect((await t.http.patch(ENDPOINT).set(as(account)).send({ status: 'enabled' })).status).toBe(200);
    await receiver.waitFor((requests) => requests.length >= 2, 20_000, 'the first attempts in flight');

    const [holder, watcher] = [await t.db.connect(), await t.db.connect()];
    let waitingAtOnce = 0;
    try {
      await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [PROMOTION_LOCK, account.id]);
      // 3 s: the attempts in flight end (1 s each), and would each wait the 500 ms lock time-out.
      const until = Date.now() + 3_000;
      while (Date.now() < until) {
        const { rows } = await watcher.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
        );
        waitingAtOnce = Math.max(waitingAtOnce, rows[0].n);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      holder.release();
      watcher.release();
    }

    await waitFor(
      async () =>
        (
          await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1 AND delivery_status = 'delivered'`,
            [account.id],
          )
        ).rows[0].n,
      (n) => n === EVENTS,
      'every event delivered after the promotion let go',
      60_000,
    );
    expect(receiver.requests.length).toBe(EVENTS);
    const attemptsWaited = t.output
      .join('')
      .split('\n')
      .filter((line) => line.includes(`could not let the next events of account ${account.id} through`));
    console.log(
      `sessions waiting on the held lock at once: ${waitingAtOnce}; attempts' ends that waited: ${attemptsWaited.length}`,
    );
    expect(attemptsWaited).toEqual([]);
    // The sweeper waits its turn (one session, until the lock time-out); no attempt's end does.
    expect(waitingAtOnce).toBeLessThanOrEqual(1);
  }, 120_000);
});
