import { createAccount } from './helpers/factories';
import { ownDatabase } from './helpers/own-database';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/** More accounts with events waiting their turn than the sweeper moves on in one sweep (500). */
const BUSY = 501;
const WAITING_EACH = 200;
/** The highest id there is: the account the sweeper reaches last. */
const LAST = 'ffffffff-ffff-4fff-bfff-ffffffffffff';

/**
 * The sweeper moves on the waiting events of accounts that have none in flight (a retention pass's,
 * a release's first ones), 500 accounts a sweep. With more accounts than that waiting, it goes round
 * them from where the last sweep stopped: the account with the highest id does not wait until the
 * 500 before it have drained (each of them keeps waiting events while its own deliveries go out).
 */
describe('events waiting their turn in more accounts than a sweep takes', () => {
  let database: { url: string; drop(): Promise<void> };
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    database = await ownDatabase('waiting_rotation');
    receiver = await WebhookReceiver.start('/busy');
    // Slow enough that no account's waiting events are gone before the check: at most 8 of its
    // deliveries in flight (its window's maintenance share), a second each, so 200 take 25 s at least.
    receiver.respondWith({ status: 200, delayMs: 1_000 });
    t = await startApp({
      DATABASE_URL: database.url,
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_rotation`,
      OUTBOX_SWEEP_INTERVAL_MS: '300',
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    await t?.kill();
    await receiver?.close();
    await database?.drop();
  });

  it("reaches the last account's events while the 500 before it still have theirs waiting", async () => {
    const template = await createAccount(t, { webhook_url: receiver.url });
    const client = await t.db.connect();
    try {
      // One transaction: the sweeper sees every account waiting at once.
      await client.query('BEGIN');
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO accounts (id, name, webhook_url, created_at, updated_at)
         SELECT CASE WHEN n = $2 THEN $3::uuid ELSE gen_random_uuid() END, 'waiting ' || n, $1, now(), now()
           FROM generate_series(1, $2::int) AS n RETURNING id`,
        [receiver.url, BUSY, LAST],
      );
      const ids = rows.map((row) => row.id);
      await client.query(
        `INSERT INTO account_secrets (id, account_id, secret_hash, secret_ciphertext, created_at)
         SELECT gen_random_uuid(), a.id, sha256(gen_random_uuid()::text::bytea), s.secret_ciphertext, now()
           FROM unnest($1::uuid[]) AS a(id), account_secrets s WHERE s.account_id = $2`,
        [ids, template.id],
      );
      await client.query(`INSERT INTO webhook_endpoints (account_id) SELECT unnest($1::uuid[])`, [ids]);
      // Every account but the last has many events waiting (as after a retention batch); the last, one.
      await client.query(
        `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
         SELECT gen_random_uuid(), a.id, gen_random_uuid(), 'verification.status_changed', '{}',
                now() + n * interval '1 ms', 'pending', NULL
           FROM unnest($1::uuid[]) AS a(id), generate_series(1, $2::int) AS n
          WHERE a.id <> $3 OR n = 1`,
        [[...ids, template.id], WAITING_EACH, LAST],
      );
      await client.query('COMMIT');
      // Rows written in bulk here stand for events that came over time, which autovacuum would have analyzed.
      await client.query('ANALYZE webhook_events');
    } finally {
      client.release();
    }

    const started = Date.now();
    const promoted = await waitFor(
      async () =>
        (
          await t.db.query<{ due: boolean }>(
            `SELECT next_attempt_at IS NOT NULL OR delivery_status <> 'pending' AS due FROM webhook_events WHERE account_id = $1`,
            [LAST],
          )
        ).rows[0].due,
      (due) => due,
      "the last account's event let through",
      60_000,
    );
    expect(promoted).toBe(true);
    // An ordering, not a stopwatch: when its turn came, the others had not drained first.
    const { rows: still } = await t.db.query<{ n: number }>(
      `SELECT count(DISTINCT account_id)::int AS n FROM webhook_events
        WHERE delivery_status = 'pending' AND next_attempt_at IS NULL AND account_id <> $1`,
      [LAST],
    );
    console.log(`last account's event let through after ${Date.now() - started} ms; ${still[0].n} others waiting`);
    expect(still[0].n).toBeGreaterThanOrEqual(500);
  }, 120_000);
});
