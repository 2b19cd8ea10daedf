import { createAccount, createVerification, transition } from './helpers/factories';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const WINDOW = 5;
/** What a replay or a release may take of WINDOW: a fifth is kept for the account's fresh changes. */
const MAINTENANCE = 4;
const REPLAYED = 300;

/**
 * One account's backlog goes out through its window: a bulk replay (as a release of held events),
 * and fresh events beyond what its endpoint takes (the worker parks them). Of them, only as many as
 * WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT are due (queued or in flight) at a time, and of a replay four
 * fifths of that; the rest wait their turn with no due time, so one account's backlog never fills
 * the shared queue with jobs that go round it, ahead of other accounts' deliveries, nor takes the
 * slots of the account's own fresh changes. Each attempt lets the next through, oldest first.
 */
describe("one account's backlog through its window", () => {
  let t: TestApp;
  let slow: WebhookReceiver;
  let fast: WebhookReceiver;

  beforeAll(async () => {
    [slow, fast] = await Promise.all([WebhookReceiver.start('/slow'), WebhookReceiver.start('/fast')]);
    t = await startApp({
      WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: String(WINDOW),
      WEBHOOK_TIMEOUT_MS: '60000',
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    await t?.kill();
    await Promise.all([slow?.close(), fast?.close()]);
  });

  const pendingOf = async (accountId: string) => {
    const { rows } = await t.db.query<{ due: number; waiting: number }>(
      `SELECT count(*) FILTER (WHERE next_attempt_at IS NOT NULL)::int AS due,
              count(*) FILTER (WHERE next_attempt_at IS NULL)::int AS waiting
         FROM webhook_events WHERE account_id = $1 AND delivery_status = 'pending'`,
      [accountId],
    );
    return rows[0];
  };

  /** `n` failed events of the account, one a millisecond apart as if its endpoint had been down, then
   * a bulk replay of them (202); returns their ids, oldest first, and the replay's body. */
  const replayFailed = async (account: { id: string; secret: string }, n: number) => {
    const { rows: created } = await t.db.query<{ id: string }>(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, last_error)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}',
              now() - interval '1 hour' + n * interval '1 ms', 'failed', 'HTTP 500'
         FROM generate_series(1, $2::int) AS n
       RETURNING id`,
      [account.id, n],
    );
    const replay = await t.http
      .post('/api/v1/public/kyc/webhook-events/redeliver')
      .set('authorization', `Bearer ${account.secret}`)
      .send({ delivery_status: 'failed' })
      .expect(202);
    return { created, replay: replay.body as unknown };
  };

  /** B's test event, sent and received while A's deliveries hang. */
  const bsEventArrives = async (b: { secret: string }): Promise<void> => {
    const test = await t.http
      .post('/api/v1/public/kyc/webhook-events/test')
      .set('authorization', `Bearer ${b.secret}`)
      .send({ status: 'approved' })
      .expect(202);
    await fast.waitFor(
      (requests) => requests.some((r) => r.headers['webhook-id'] === test.body.id),
      20_000,
      "B's event",
    );
  };

  /** A's endpoint answers again (its hanging attempts fail, to be retried); waits until A has nothing pending. */
  const drains = async (endpoint: WebhookReceiver, accountId: string): Promise<void> => {
    endpoint.respondWith({ status: 200 });
    endpoint.dropConnections();
    await waitFor(
      () => pendingOf(accountId),
      (p) => p.due + p.waiting === 0,
      "A's events delivered",
      60_000,
    );
  };

  it("queues no more of a replay than the window, delivers another account's event meanwhile, then the rest oldest first", async () => {
    const a = await createAccount(t, { webhook_url: slow.url });
    const b = await createAccount(t, { webhook_url: fast.url });
    slow.respondWith({ hang: true });
    const { created, replay } = await replayFailed(a, REPLAYED);
    expect(replay).toEqual({ object: 'redelivery', count: REPLAYED });

    await slow.waitFor((requests) => requests.length >= MAINTENANCE, 20_000, "A's first replayed deliveries");
    // The replay's share of the window is full and hangs: the rest wait in the database, not as jobs in the queue.
    expect(await pendingOf(a.id)).toEqual({ due: MAINTENANCE, waiting: REPLAYED - MAINTENANCE });
    const firstSent = new Set(slow.requests.map((r) => r.headers['webhook-id']));
    expect(firstSent).toEqual(new Set(created.slice(0, MAINTENANCE).map((row) => row.id)));

    // B's event goes out while every one of A's deliveries still hangs.
    await bsEventArrives(b);
    expect(slow.requests).toHaveLength(MAINTENANCE);

    // Then each of A's attempts lets the next through until all are delivered.
    await drains(slow, a.id);
    const { rows } = await t.db.query<{ delivered: number }>(
      `SELECT count(*)::int AS delivered FROM webhook_events WHERE account_id = $1 AND delivery_status = 'delivered'`,
      [a.id],
    );
    expect(rows[0].delivered).toBe(created.length);
  }, 120_000);

  it('parks fresh events beyond the window instead of deferring their jobs in a loop; all go out once the endpoint answers', async () => {
    const endpoint = await WebhookReceiver.start('/busy');
    try {
      endpoint.respondWith({ hang: true });
      const a = await createAccount(t, { webhook_url: endpoint.url });
      const b = await createAccount(t, { webhook_url: fast.url });
      const verifications = await Promise.all(Array.from({ length: 40 }, () => createVerification(t, a.id)));
      await Promise.all(verifications.map((v) => transition(t, v.id, { status: 'processing' })));
      await endpoint.waitFor((requests) => requests.length >= WINDOW, 20_000, "A's first deliveries");
      // Every job has run once: the window is in flight, the rest parked in the database.
      const parked = await waitFor(
        () => pendingOf(a.id),
        (pending) => pending.due === WINDOW,
        "A's events beyond the window parked",
        20_000,
      );
      expect(parked.due + parked.waiting).toBe(40);

      await bsEventArrives(b);
      expect(endpoint.requests).toHaveLength(WINDOW);

      await drains(endpoint, a.id);
      const { rows } = await t.db.query<{ status: string; n: number }>(
        `SELECT delivery_status AS status, count(*)::int AS n FROM webhook_events WHERE account_id = $1 GROUP BY 1`,
        [a.id],
      );
      expect(rows).toEqual([{ status: 'delivered', n: 40 }]);
    } finally {
      await endpoint.close();
    }
  }, 120_000);

  it("sends the account's own status change while its replay takes its share of the window and hangs", async () => {
    const endpoint = await WebhookReceiver.start('/own');
    try {
      endpoint.respondWith({ hang: true });
      const a = await createAccount(t, { webhook_url: endpoint.url });
      await replayFailed(a, 50);
      await endpoint.waitFor((requests) => requests.length >= MAINTENANCE, 20_000, "A's first replayed deliveries");

      // A's change, made while the replay's attempts hang and 46 more of it wait: it takes a slot the
      // replay may not, and goes out now, not after the replay (before, it was parked behind it).
      const v = await createVerification(t, a.id);
      await transition(t, v.id, { status: 'processing' });
      const sent = await endpoint.waitFor(
        (requests) => requests.some((r) => r.body.includes(v.id)),
        20_000,
        "A's change",
      );
      const own = sent.filter((r) => r.body.includes(v.id)).map((r) => JSON.parse(r.body) as { type: string });
      expect(own.map((body) => body.type)).toEqual(['verification.status_changed']);
      expect(sent.filter((r) => !r.body.includes(v.id))).toHaveLength(MAINTENANCE);

      await drains(endpoint, a.id);
    } finally {
      await endpoint.close();
    }
  }, 120_000);

  it("sends the account's own changes beyond the kept fifth as soon as a replayed delivery ends, not after the replay", async () => {
    const endpoint = await WebhookReceiver.start('/mixed');
    try {
      // Replayed events (empty bodies) take a second each; the account's own changes hang, keeping their slots.
      endpoint.respondWith((request) =>
        request.body.includes('"verification"') ? { hang: true } : { status: 200, delayMs: 1_000 },
      );
      const a = await createAccount(t, { webhook_url: endpoint.url });
      await replayFailed(a, 200);
      await endpoint.waitFor((requests) => requests.length >= MAINTENANCE, 20_000, "A's first replayed deliveries");
      const [first, second] = await Promise.all([createVerification(t, a.id), createVerification(t, a.id)]);
      const sent = (id: string) => (requests: { body: string }[]) => requests.some((r) => r.body.includes(id));

      // The first change takes the slot kept for A's own changes, and hangs in it.
      await transition(t, first.id, { status: 'processing' });
      await endpoint.waitFor(sent(first.id), 20_000, "A's first change");
      // The second finds every slot taken, four of them by the replay: it goes out as soon as one of
      // those ends (the replay may not take it back), not after the replay's 196 other events.
      await transition(t, second.id, { status: 'processing' });
      await endpoint.waitFor(sent(second.id), 20_000, "A's second change");
      expect((await pendingOf(a.id)).waiting).toBeGreaterThan(150);
    } finally {
      await endpoint.close();
    }
  }, 120_000);
});
