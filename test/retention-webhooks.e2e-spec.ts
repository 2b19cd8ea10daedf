import Redis from 'ioredis';
import { DELIVERY_QUEUE } from 'src/webhooks/queue/webhook-queue.constants';
import { createAccount } from './helpers/factories';
import { ownDatabase } from './helpers/own-database';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const PREFIX = `${process.env.QUEUE_PREFIX}_retentionhooks`;
const HOOKED = 100;
const BARE = 20;
/** Four fifths of WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT=5: what maintenance traffic may take of an account's slots. */
const SHARE = 4;

/** `n` verifications of the account decided 40 days ago: past PII_RETENTION_DAYS=30. */
async function insertAged(t: TestApp, accountId: string, n: number): Promise<void> {
  await t.db.query(
    `INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at,
                                submitted_at, decided_at, applicant, rejection_reasons)
     SELECT gen_random_uuid(), $1, 'aged-' || n, 'approved', 3, now() - interval '60 days',
            now() - interval '40 days', now() - interval '41 days', now() - interval '40 days' - n * interval '1 second',
            jsonb_build_object('first_name', 'Aged', 'last_name', 'Row' || n), '{}'
       FROM generate_series(1, $2::int) AS n`,
    [accountId, n],
  );
}

/**
 * A first retention pass redacts by the thousand. Its `verification.redacted` events wait their turn
 * in the database, as a release's do: each account's go out through its share of the window, with
 * no queue job made for the others. An account without a webhook URL gets its events failed at once,
 * each a failed job as every such event is (the dashboard's Failed tab lists them).
 */
describe("a retention pass's webhooks", () => {
  let database: { url: string; drop(): Promise<void> };
  let t: TestApp;
  let receiver: WebhookReceiver;
  const redis = new Redis(process.env.REDIS_URL as string);

  beforeAll(async () => {
    // A database of its own: the pass must not redact other specs' rows.
    database = await ownDatabase('retention_hooks');
    receiver = await WebhookReceiver.start('/hooked');
    receiver.respondWith({ hang: true });
    t = await startApp({
      DATABASE_URL: database.url,
      QUEUE_PREFIX: PREFIX,
      PII_RETENTION_DAYS: '30',
      RETENTION_INTERVAL_MS: '200',
      RETENTION_BUDGET_PERCENT: '100',
      WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '5',
      WEBHOOK_TIMEOUT_MS: '60000',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    await t?.kill();
    await receiver?.close();
    await database?.drop();
    redis.disconnect();
  });

  const redactedEvents = async (accountId: string) =>
    (
      await t.db.query<{ id: string; status: string; due: boolean; error: string | null }>(
        `SELECT id, delivery_status AS status, next_attempt_at IS NOT NULL AS due, last_error AS error
           FROM webhook_events WHERE account_id = $1 AND type = 'verification.redacted'`,
        [accountId],
      )
    ).rows;

  /** How many of the events have a job in the delivery queue (in any state). */
  const withJobs = async (events: { id: string }[]): Promise<number> => {
    const found = await Promise.all(events.map((e) => redis.exists(`${PREFIX}:${DELIVERY_QUEUE}:${e.id}:1`)));
    return found.reduce((sum, n) => sum + n, 0);
  };

  it("queues only the account's share of its window, then the rest as its deliveries end; a failed job for each of an account without a URL", async () => {
    const hooked = await createAccount(t, { webhook_url: receiver.url });
    const bare = await createAccount(t, { webhook_url: null });
    await insertAged(t, hooked.id, HOOKED);
    await insertAged(t, bare.id, BARE);

    await waitFor(
      async () => (await redactedEvents(hooked.id)).length + (await redactedEvents(bare.id)).length,
      (n) => n === HOOKED + BARE,
      'the pass to redact every aged verification',
      30_000,
    );
    await receiver.waitFor((requests) => requests.length >= SHARE, 20_000, 'the first redaction webhooks');
    // A sweep or two more: nothing else is let through while those hang.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(receiver.requests).toHaveLength(SHARE);

    const events = await redactedEvents(hooked.id);
    expect(events.filter((e) => e.status === 'pending' && e.due)).toHaveLength(SHARE);
    expect(events.filter((e) => e.status === 'pending' && !e.due)).toHaveLength(HOOKED - SHARE);
    // One queue job per event let through, not one per event redacted.
    expect(await withJobs(events)).toBe(SHARE);

    const dead = await redactedEvents(bare.id);
    expect(dead.map((e) => [e.status, e.error])).toEqual(dead.map(() => ['failed', 'no_webhook_url']));
    await waitFor(
      () => withJobs(dead),
      (n) => n === BARE,
      'the failed jobs of the account without a URL',
    );

    // The endpoint answers again: every one of them goes out.
    receiver.respondWith({ status: 200 });
    receiver.dropConnections();
    await waitFor(
      async () => (await redactedEvents(hooked.id)).filter((e) => e.status === 'delivered').length,
      (n) => n === HOOKED,
      'every redaction webhook delivered',
      90_000,
    );
  }, 150_000);
});

/**
 * The pass lets each batch's webhooks through as the batch commits, paced as the batch is, instead of
 * leaving them all to the next sweep: a sweep interval's worth of them at once was a burst that other
 * clients' requests waited behind (docs/performance.md). With no sweep in the test's time, they still
 * go out.
 */
describe("a retention pass's webhooks, with no sweep to let them through", () => {
  let database: { url: string; drop(): Promise<void> };
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    database = await ownDatabase('retention_hooks_unswept');
    receiver = await WebhookReceiver.start('/unswept');
    t = await startApp({
      DATABASE_URL: database.url,
      QUEUE_PREFIX: `${PREFIX}_unswept`,
      PII_RETENTION_DAYS: '30',
      RETENTION_INTERVAL_MS: '200',
      RETENTION_BUDGET_PERCENT: '100',
      WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '5',
      OUTBOX_SWEEP_INTERVAL_MS: '3600000',
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    await t?.kill();
    await receiver?.close();
    await database?.drop();
  });

  it('delivers every account’s redaction webhooks as the batches commit', async () => {
    const accounts = await Promise.all(
      Array.from({ length: 3 }, () => createAccount(t, { webhook_url: receiver.url })),
    );
    for (const account of accounts) await insertAged(t, account.id, 30);
    const delivered = async (): Promise<number> =>
      (
        await t.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_events
            WHERE type = 'verification.redacted' AND delivery_status = 'delivered' AND account_id = ANY ($1::uuid[])`,
          [accounts.map((account) => account.id)],
        )
      ).rows[0].n;
    await waitFor(delivered, (n) => n === 90, "every redaction webhook, within the sweep's hour", 30_000);
    const received = receiver.requests.map((request) => JSON.parse(request.body) as { type: string });
    expect(received.filter((body) => body.type === 'verification.redacted')).toHaveLength(90);
  }, 60_000);
});
