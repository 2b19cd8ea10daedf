import { type CreatedAccount, createAccount } from './helpers/factories';
import { ownDatabase } from './helpers/own-database';
import { type PlanNode, explained, rowsRead, statementOf } from './helpers/plans';
import { metricValue, waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';

/**
 * The delivery log filtered by status reads only the caller's own index range, however its events
 * lie in time and whatever the statistics say: here the big account's failed events sit 85 days
 * back, behind 54,000 newer events of its own, while the statistics (taken before they moved, with
 * autovacuum off) still place them among the recent ones. A walk of every account's events by time
 * (what `delivery_status = ANY(…)` is planned as) would read tens of thousands of rows before the
 * first match; the statement in sql/webhooks/delivery-log-statuses.sql reads a page per status.
 */
const PAGE = 25;

/** As the relay runs its statement: sorting (and JIT) off around it (src/database/sort-free-plan.ts). */
const SORT_FREE = ['database/sort-free-plan-pin.sql'];

const eventRowsRead = (nodes: PlanNode[]) => rowsRead(nodes, 'webhook_events');

describe('delivery log by status on a skewed account with stale statistics', () => {
  let database: { url: string; drop(): Promise<void> };
  let t: TestApp;
  let big: CreatedAccount;

  beforeAll(async () => {
    database = await ownDatabase('log_plan');
    t = await startApp({ DATABASE_URL: database.url, APP_ROLE: 'api', LOG_LEVEL: 'warn' });
    big = await createAccount(t, { webhook_url: null });
    const other = await createAccount(t, { webhook_url: null });
    await t.db.query('ALTER TABLE webhook_events SET (autovacuum_enabled = false)');
    // 60,000 events of the big account over the last 10 days, one in ten failed; 40,000 of another.
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}',
              now() - n * interval '14 seconds', CASE WHEN n % 10 = 0 THEN 'failed' ELSE 'delivered' END
         FROM generate_series(1, 60000) AS n`,
      [big.id],
    );
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}',
              now() - n * interval '21 seconds', 'delivered'
         FROM generate_series(1, 40000) AS n`,
      [other.id],
    );
    await t.db.query('ANALYZE webhook_events');
    // The outage months ago: the failed events move back, and the statistics do not follow.
    await t.db.query(
      `UPDATE webhook_events SET created_at = now() - interval '85 days' - created_at_offset.o
         FROM (SELECT id, (now() - created_at) AS o FROM webhook_events WHERE account_id = $1 AND delivery_status = 'failed') AS created_at_offset
        WHERE webhook_events.id = created_at_offset.id`,
      [big.id],
    );
  }, 120_000);

  afterAll(async () => {
    await t?.kill();
    await database?.drop();
  });

  // The seeded events carry no real payload: read with plain fetch, not the OpenAPI-checked client.
  const page = async (query: string): Promise<{ data: { id: string }[]; next_cursor: string }> => {
    const res = await fetch(`${t.url}/api/v1/public/kyc/webhook-events?${query}`, {
      headers: { authorization: `Bearer ${big.secret}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { data: { id: string }[]; next_cursor: string };
  };

  it('answers the newest failed events, page after page', async () => {
    const first = await page(`delivery_status=failed&limit=${PAGE}`);
    const expected = await t.db.query<{ id: string }>(
      `SELECT id FROM webhook_events WHERE account_id = $1 AND delivery_status = 'failed'
        ORDER BY created_at DESC, id DESC LIMIT ${2 * PAGE}`,
      [big.id],
    );
    const ids = first.data.map((event) => event.id);
    expect(ids).toEqual(expected.rows.slice(0, PAGE).map((row) => row.id));
    const second = await page(`delivery_status=failed&limit=${PAGE}&cursor=${first.next_cursor}`);
    expect(second.data.map((event) => event.id)).toEqual(expected.rows.slice(PAGE).map((row) => row.id));
  });

  it('reads one page per status from the account-and-status index, and no other row', async () => {
    const nodes = await explained(database.url, 'webhooks/delivery-log-statuses.sql', [
      big.id,
      ['failed', 'held'],
      PAGE + 1,
    ]);
    // At most a page per status (one more row each, for the next cursor), none thrown away.
    expect(eventRowsRead(nodes)).toBeLessThanOrEqual(2 * (PAGE + 1));
    const scans = nodes.filter((node) => node['Relation Name'] === 'webhook_events');
    expect(scans.map((node) => [node['Node Type'], node['Index Name']])).toEqual([
      ['Index Scan', 'webhook_events_account_status_created_idx'],
    ]);
  });

  it('counts the backlog gauge up to 10,000 however many events are due (12,000 here)', async () => {
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}', now(), 'pending',
              now() - interval '1 hour' + n * interval '1 ms'
         FROM generate_series(1, 12000) AS n`,
      [big.id],
    );
    // Statistics that know the backlog (autovacuum is off on this table; a backlog this size gets
    // analyzed in service). With the earlier ones, which saw no due event, the planner reads the
    // oldest from the other partial index and sorts all 12,000: not pinned for this statement.
    await t.db.query('ANALYZE webhook_events');
    const nodes = await explained(database.url, 'webhooks/outbox-backlog.sql', [10_000]);
    // The count's 10,000 entries and the oldest's one (from the partial index on due events).
    expect(eventRowsRead(nodes)).toBeLessThanOrEqual(10_001);
    await waitFor(
      async () => metricValue(await (await fetch(`${t.url}/metrics`)).text(), 'webhook_outbox_backlog'),
      (value) => value === 10_000,
      'the backlog gauge at its cap',
    );
  });

  it("relays each late account's share of a pass, reading neither the backlog nor its order", async () => {
    // Beside the big account's 12,000 due events: another's 5, and 3,000 of a third due only tomorrow.
    const [small, later] = [
      await createAccount(t, { webhook_url: null }),
      await createAccount(t, { webhook_url: null }),
    ];
    const pending = (account: string, n: number, due: string) =>
      t.db.query(
        `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
         SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.status_changed', '{}', now(), 'pending', ${due}
           FROM generate_series(1, ${n}) AS n`,
        [account],
      );
    await pending(small.id, 5, `now() - interval '1 minute'`);
    await pending(small.id, 2_000, 'NULL'); // waiting their turn (a bulk replay's): not due, never relayed
    await pending(later.id, 3_000, `now() + interval '1 day'`);
    const { rows } = await t.db.query<{ accountId: string }>(statementOf('webhooks/relay-overdue.sql'), [3, 500]);
    const per = (id: string) => rows.filter((row) => row.accountId === id).length;
    // Two late accounts: half a pass each at most; the small one's five all in it, nothing of the third.
    expect([per(big.id), per(small.id), per(later.id)]).toEqual([250, 5, 0]);
    const nodes = await explained(database.url, 'webhooks/relay-overdue.sql', [3, 500], SORT_FREE);
    // A probe per account with pending events, the big account's share, and the picked rows read back.
    expect(eventRowsRead(nodes)).toBeLessThanOrEqual(1_000);
  });

  it('counts the events waiting their turn up to 10,000 too, at the same cost (12,000 more here)', async () => {
    // Beside the 12,000 due and the 2,000 waiting above: 12,000 of the big account waiting (a retention pass's).
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status)
       SELECT gen_random_uuid(), $1, gen_random_uuid(), 'verification.redacted', '{}', now(), 'pending'
         FROM generate_series(1, 12000) AS n`,
      [big.id],
    );
    await t.db.query('ANALYZE webhook_events');
    const nodes = await explained(database.url, 'webhooks/outbox-backlog.sql', [10_000]);
    // 10,000 entries of each count and the oldest due's one.
    expect(eventRowsRead(nodes)).toBeLessThanOrEqual(20_001);
    const served = async (name: string) => metricValue(await (await fetch(`${t.url}/metrics`)).text(), name);
    await waitFor(
      () => served('webhook_outbox_waiting'),
      (value) => value === 10_000,
      'the waiting gauge at its cap',
    );
    expect(await served('webhook_outbox_backlog')).toBe(10_000);
  });
});
