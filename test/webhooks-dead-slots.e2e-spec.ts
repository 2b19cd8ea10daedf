import { type CreatedAccount, createAccount, insertHeldEvents } from './helpers/factories';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * A worker killed with deliveries in flight leaves their account's slots taken until they expire
 * (WEBHOOK_TIMEOUT_MS plus a margin). The next worker waits for them without spinning: an event
 * refused a slot waits its turn, and is let through when a slot frees or, for a dead worker's
 * slots, at the sweep after they expired. Then everything is delivered.
 */

const ENDPOINT = '/api/v1/public/kyc/webhook-endpoint';
const EVENTS = 20;
// Events updated in the account's 8 s of waiting for the dead slots: a promotion and a park per
// event let through at each sweep (every 5 s), about 10. Spinning, it was thousands.
const QUIET_UPDATES = 60;

describe('a worker killed with deliveries in flight', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  // A release goes out in the maintenance lane, which may take two of the account's three slots.
  const env = { WEBHOOK_TIMEOUT_MS: '20000', WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '3', LOG_LEVEL: 'warn' };

  const as = (account: CreatedAccount) => ({ authorization: `Bearer ${account.secret}` });
  const updates = async (): Promise<number> => {
    const { rows } = await t.db.query<{ n: string }>(
      "SELECT n_tup_upd AS n FROM pg_stat_user_tables WHERE relname = 'webhook_events'",
    );
    return Number(rows[0].n);
  };
  const waiting = async (account: CreatedAccount): Promise<number> => {
    const { rows } = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events
        WHERE account_id = $1 AND delivery_status = 'pending' AND next_attempt_at IS NULL`,
      [account.id],
    );
    return rows[0].n;
  };

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.respondWith({ hang: true });
    t = await startApp(env);
  });

  afterAll(async () => {
    await t?.kill();
    await receiver?.close();
  });

  it('leaves the next worker waiting quietly for its slots, then delivers everything', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    expect((await t.http.patch(ENDPOINT).set(as(account)).send({ status: 'disabled' })).status).toBe(200);
    await insertHeldEvents(t, account.id, EVENTS, '1 hour');
    expect((await t.http.patch(ENDPOINT).set(as(account)).send({ status: 'enabled' })).status).toBe(200);
    await receiver.waitFor((requests) => requests.length >= 2, 20_000, 'two deliveries hanging');

    await t.kill();
    t = await startApp(env);
    // The killed worker's jobs come back as stalled (within about 15 s) and are refused a slot:
    // every event of the account waits its turn.
    await waitFor(
      () => waiting(account),
      (n) => n === EVENTS,
      'every event waiting its turn',
      30_000,
    );
    const before = await updates();
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    const updated = (await updates()) - before;
    console.log(`events updated in 8 s while the dead worker's slots were taken: ${updated}`);
    expect(updated).toBeLessThan(QUIET_UPDATES);

    receiver.respondWith({ status: 204 });
    await waitFor(
      async () =>
        (
          await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1 AND delivery_status = 'delivered'`,
            [account.id],
          )
        ).rows[0].n,
      (n) => n === EVENTS,
      'every event delivered once the slots expired',
      90_000,
    );
  }, 180_000);
});
