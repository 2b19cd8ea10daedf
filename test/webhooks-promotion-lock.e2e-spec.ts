import { type CreatedAccount, createAccount, insertHeldEvents } from './helpers/factories';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * An account's waiting events are let through by one promotion at a time (an advisory lock per
 * account). While one is under way, the account's attempts that end do not wait for it (each
 * would hold a pooled connection, up to the lock time-out behind a long one, then log a warning);
 * they try again after short pauses, so what the promotion under way did not see is still let
 * through after it. The tests hold the account's lock themselves across the ends of the attempts
 * in flight: for longer than those pauses (the sweeper lets the rest through), and released as
 * the last attempt ends, with no sweeper (the attempts' own retries must).
 */

const ENDPOINT = '/api/v1/public/kyc/webhook-endpoint';
const EVENTS = 40;
// The first key of the promotions' advisory lock (src/webhooks/tables/promotion-locks.ts).
const PROMOTION_LOCK = 7_277_004;

describe.each([
  { sweep: 'every second', sweepMs: '1000', holdAfterLastEndMs: 1_500 },
  { sweep: 'none', sweepMs: '3600000', holdAfterLastEndMs: 0 },
])("an account's promotion under way (sweep: $sweep)", ({ sweepMs, holdAfterLastEndMs }) => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  const as = (account: CreatedAccount) => ({ authorization: `Bearer ${account.secret}` });
  const count = async (account: CreatedAccount, where: string): Promise<number> =>
    (
      await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1 AND ${where}`,
        [account.id],
      )
    ).rows[0].n;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({ LOG_LEVEL: 'warn', OUTBOX_SWEEP_INTERVAL_MS: sweepMs });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('is not waited for by the attempts that end meanwhile, and every event is delivered once', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    expect((await t.http.patch(ENDPOINT).set(as(account)).send({ status: 'disabled' })).status).toBe(200);
    await insertHeldEvents(t, account.id, EVENTS, '1 hour');
    // Each attempt takes a second, so the test takes the lock while the first ones are in flight.
    receiver.respondWith({ status: 204, delayMs: 1_000 });
    expect((await t.http.patch(ENDPOINT).set(as(account)).send({ status: 'enabled' })).status).toBe(200);
    await receiver.waitFor((requests) => requests.length >= 2, 20_000, 'the first attempts in flight');

    const [holder, watcher] = [await t.db.connect(), await t.db.connect()];
    let waitingAtOnce = 0;
    const before = await count(account, "delivery_status = 'delivered'");
    try {
      await holder.query('SELECT pg_advisory_lock($1, hashtext($2))', [PROMOTION_LOCK, account.id]);
      const inFlight = "delivery_status = 'pending' AND next_attempt_at IS NOT NULL";
      let lastEndSeen: number | undefined;
      while (lastEndSeen === undefined || Date.now() < lastEndSeen + holdAfterLastEndMs) {
        const { rows } = await watcher.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
        );
        waitingAtOnce = Math.max(waitingAtOnce, rows[0].n);
        if (lastEndSeen === undefined && (await count(account, inFlight)) === 0) lastEndSeen = Date.now();
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      await holder.query('SELECT pg_advisory_unlock_all()');
      holder.release();
      watcher.release();
    }
    // Counted after the release, not to delay it: what it lets through takes a second to arrive.
    const endedInHold = (await count(account, "delivery_status = 'delivered'")) - before;

    await waitFor(
      () => count(account, "delivery_status = 'delivered'"),
      (n) => n === EVENTS,
      'every event delivered after the promotion let go',
      30_000,
    );
    expect(receiver.requests.length).toBe(EVENTS);
    const attemptsWaited = t.output
      .join('')
      .split('\n')
      .filter((line) => line.includes(`could not let the next events of account ${account.id} through`));
    console.log(
      `attempts that ended while the lock was held: ${endedInHold}; sessions waiting on it at once: ${waitingAtOnce}; ` +
        `attempts' ends that timed out waiting: ${attemptsWaited.length}`,
    );
    expect(endedInHold).toBeGreaterThanOrEqual(2);
    expect(attemptsWaited).toEqual([]);
    // At most the sweeper waits its turn (one session, until the lock time-out); no attempt's end does.
    expect(waitingAtOnce).toBeLessThanOrEqual(1);
  }, 120_000);
});
