import { type CreatedAccount, createAccount } from './helpers/factories';
import { ownDatabase } from './helpers/own-database';
import { explained, rowsRead } from './helpers/plans';
import { type TestApp, startApp } from './helpers/test-app';

/**
 * The verification list filtered by status reads only the caller's own index range per status, however
 * its verifications lie in time and whatever the statistics say: here the big account's rejected
 * verifications sit 85 days back, behind 54,000 newer ones of its own, while the statistics (taken
 * before they moved, with autovacuum off) still place them among the recent ones. A walk of the
 * account's rows by time (what `status = ANY(…)` is planned as) reads every newer row before the first
 * match; the statement in sql/verifications/list-status.sql reads a page per status.
 */
const PAGE = 25;

describe('verification list by status on a skewed account with stale statistics', () => {
  let database: { url: string; drop(): Promise<void> };
  let t: TestApp;
  let big: CreatedAccount;

  beforeAll(async () => {
    database = await ownDatabase('list_plan');
    t = await startApp({ DATABASE_URL: database.url, APP_ROLE: 'api', LOG_LEVEL: 'warn' });
    big = await createAccount(t, { webhook_url: null });
    const other = await createAccount(t, { webhook_url: null });
    await t.db.query('ALTER TABLE verifications SET (autovacuum_enabled = false)');
    // 60,000 verifications of the big account over the last 10 days, one in ten rejected; 40,000 of another.
    const seed = `INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at, decided_at)
       SELECT gen_random_uuid(), $1, 'user-' || n, CASE WHEN n % 10 = 0 THEN 'rejected' ELSE 'approved' END, 3,
              now() - n * $2::interval, now() - n * $2::interval, now() - n * $2::interval
         FROM generate_series(1, $3::int) AS n`;
    await t.db.query(seed, [big.id, '14 seconds', 60_000]);
    await t.db.query(seed, [other.id, '21 seconds', 40_000]);
    await t.db.query('ANALYZE verifications');
    // A wave of rejections months ago: they move back, and the statistics do not follow.
    await t.db.query(
      `UPDATE verifications SET created_at = created_at - interval '85 days', updated_at = updated_at - interval '85 days',
              decided_at = decided_at - interval '85 days'
        WHERE account_id = $1 AND status = 'rejected'`,
      [big.id],
    );
  }, 120_000);

  afterAll(async () => {
    await t?.kill();
    await database?.drop();
  });

  // The seeded rows carry no applicant: read with plain fetch, not the OpenAPI-checked client.
  const page = async (query: string): Promise<{ data: { id: string }[]; next_cursor: string }> => {
    const res = await fetch(`${t.url}/api/v1/public/kyc/verifications?${query}`, {
      headers: { authorization: `Bearer ${big.secret}` },
    });
    expect(res.status).toBe(200);
    return (await res.json()) as { data: { id: string }[]; next_cursor: string };
  };

  it.each(['created_at', 'updated_at'])(
    'answers the newest rejected verifications by -%s, page after page',
    async (column) => {
      const first = await page(`status=rejected&sort=-${column}&limit=${PAGE}`);
      const expected = await t.db.query<{ id: string }>(
        `SELECT id FROM verifications WHERE account_id = $1 AND status = 'rejected'
        ORDER BY ${column} DESC, id DESC LIMIT ${2 * PAGE}`,
        [big.id],
      );
      expect(first.data.map((v) => v.id)).toEqual(expected.rows.slice(0, PAGE).map((row) => row.id));
      const second = await page(`status=rejected&sort=-${column}&limit=${PAGE}&cursor=${first.next_cursor}`);
      expect(second.data.map((v) => v.id)).toEqual(expected.rows.slice(PAGE).map((row) => row.id));
    },
  );

  it('reads one page per status from the account-and-status index, and no other row', async () => {
    const nodes = await explained(database.url, 'verifications/list-status.sql', [
      big.id,
      ['pending', 'rejected'],
      PAGE + 1,
    ]);
    // At most a page per status (one more row each, for the next cursor), none thrown away.
    expect(rowsRead(nodes, 'verifications')).toBeLessThanOrEqual(2 * (PAGE + 1));
  });
});
