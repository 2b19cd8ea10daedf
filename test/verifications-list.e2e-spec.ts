import {
  createAccount,
  createVerification,
  createVerificationInStatus,
  transition,
  type CreatedAccount,
  type VerificationJson,
} from './helpers/factories';
import { insertVerificationRow } from './helpers/db-rows';
import { ISO_MS, LOWER_UUID, expectError } from './helpers/expect-error';
import { LIST_PATH, ids, listAll, listPage } from './helpers/list';
import { TestApp, startApp } from './helpers/test-app';

type Sort = '-created_at' | 'created_at' | '-updated_at' | 'updated_at';
const SORTS: Sort[] = ['-created_at', 'created_at', '-updated_at', 'updated_at'];

/** The order the contract promises: the sort column, then id, both in the same direction. */
function sorted<T extends { id: string; created_at: string; updated_at: string }>(rows: T[], sort: Sort): T[] {
  const column = sort.replace('-', '') as 'created_at' | 'updated_at';
  const sign = sort.startsWith('-') ? -1 : 1;
  return [...rows].sort((a, b) => sign * (a[column].localeCompare(b[column]) || a.id.localeCompare(b.id)));
}

describe('GET /api/v1/public/kyc/verifications', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('filters', () => {
    let account: CreatedAccount;
    const by: Record<string, VerificationJson> = {};

    beforeAll(async () => {
      account = await createAccount(t);
      by.pending = await createVerification(t, account.id, {
        external_user_id: 'user-42',
        applicant: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
      });
      by.processing = await createVerificationInStatus(t, account.id, 'processing', {
        external_user_id: 'user-420',
        applicant: { first_name: 'Charles', last_name: 'Babbage', email: 'cb@engine.org' },
      });
      by.approved = await createVerificationInStatus(t, account.id, 'approved', {
        external_user_id: 'USER_7',
        applicant: { first_name: 'Grace', last_name: 'Hopper', email: null },
      });
      by.rejected = await createVerificationInStatus(t, account.id, 'rejected', {
        external_user_id: 'pct%50',
        applicant: { first_name: 'Alan', last_name: null, email: 'alan%100@example.com' },
      });
    });

    const search = async (query: Record<string, string>): Promise<string[]> =>
      ids(await listAll(t, account.secret, query)).sort();
    const expected = (...keys: string[]): string[] => keys.map((key) => by[key].id).sort();

    it('without filters returns every row, newest first, in the contract shape', async () => {
      const page = await listPage(t, account.secret, {});
      expect(Object.keys(page).sort()).toEqual(['data', 'has_more', 'next_cursor', 'object']);
      expect(page.object).toBe('list');
      expect(page.has_more).toBe(false);
      expect(page.next_cursor).toBeNull();
      expect(ids(page.data)).toEqual([by.rejected.id, by.approved.id, by.processing.id, by.pending.id]);
      const item = page.data.find((v) => v.id === by.rejected.id) as VerificationJson;
      expect(Object.keys(item).sort()).toEqual(
        [
          'applicant',
          'created_at',
          'decided_at',
          'document',
          'external_user_id',
          'id',
          'metadata',
          'object',
          'redacted_at',
          'rejection_reasons',
          'status',
          'submitted_at',
          'updated_at',
          'version',
        ].sort(),
      );
      expect(item).toMatchObject({
        object: 'verification',
        status: 'rejected',
        version: 3,
        rejection_reasons: ['other'],
        metadata: {},
      });
      for (const v of page.data) {
        expect(v.id).toMatch(LOWER_UUID);
        for (const key of ['created_at', 'updated_at'] as const) expect(v[key]).toMatch(ISO_MS);
        for (const key of ['submitted_at', 'decided_at']) if (v[key] !== null) expect(v[key]).toMatch(ISO_MS);
      }
    });

    it('status: one value', async () => {
      await expect(search({ status: 'approved' })).resolves.toEqual(expected('approved'));
    });

    it('status: several values, comma-separated', async () => {
      await expect(search({ status: 'approved,rejected' })).resolves.toEqual(expected('approved', 'rejected'));
      await expect(search({ status: 'pending,processing,approved,rejected' })).resolves.toEqual(
        expected('pending', 'processing', 'approved', 'rejected'),
      );
    });

    it('external_user_id is an exact, case-sensitive match', async () => {
      await expect(search({ external_user_id: 'user-42' })).resolves.toEqual(expected('pending'));
      await expect(search({ external_user_id: 'user-4' })).resolves.toEqual([]);
      await expect(search({ external_user_id: 'user_7' })).resolves.toEqual([]);
    });

    it('q: case-insensitive substring of external_user_id', async () => {
      await expect(search({ q: 'USER-42' })).resolves.toEqual(expected('pending', 'processing'));
      await expect(search({ q: 'er_7' })).resolves.toEqual(expected('approved'));
    });

    it('q: substring of the full name "first last"', async () => {
      await expect(search({ q: 'ada lovelace' })).resolves.toEqual(expected('pending'));
      await expect(search({ q: 'a LOVE' })).resolves.toEqual(expected('pending'));
      await expect(search({ q: 'hopper' })).resolves.toEqual(expected('approved'));
      await expect(search({ q: 'lovelace ada' })).resolves.toEqual([]);
    });

    it('q: substring of the email', async () => {
      await expect(search({ q: '@ENGINE.org' })).resolves.toEqual(expected('processing'));
    });

    it('q: LIKE wildcards are literal', async () => {
      await expect(search({ q: '%' })).resolves.toEqual(expected('rejected'));
      await expect(search({ q: 'N%1' })).resolves.toEqual(expected('rejected'));
      await expect(search({ q: '_' })).resolves.toEqual(expected('approved'));
      await expect(search({ q: 'user_4' })).resolves.toEqual([]);
      await expect(search({ q: 'a%e' })).resolves.toEqual([]);
      await expect(search({ q: '\\' })).resolves.toEqual([]);
    });

    it('q matches nothing across field boundaries', async () => {
      await expect(search({ q: 'user-42ada' })).resolves.toEqual([]);
      await expect(search({ q: 'lovelaceada@' })).resolves.toEqual([]);
    });

    it('filters combine', async () => {
      await expect(search({ q: 'user-42', status: 'processing' })).resolves.toEqual(expected('processing'));
      await expect(search({ q: 'user-42', status: 'approved' })).resolves.toEqual([]);
    });
  });

  describe('time ranges', () => {
    let account: CreatedAccount;
    const rows: Record<string, string> = {};

    beforeAll(async () => {
      account = await createAccount(t);
      rows.a = await insertVerificationRow(t.db, account.id, {
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-03-01T00:00:00.000Z',
      });
      rows.b = await insertVerificationRow(t.db, account.id, {
        created_at: '2026-01-01T00:00:00.001Z',
        updated_at: '2026-03-01T00:00:00.001Z',
      });
      rows.c = await insertVerificationRow(t.db, account.id, {
        created_at: '2026-01-02T00:00:00.000Z',
        updated_at: '2026-01-02T00:00:00.000Z',
      });
    });

    const search = async (query: Record<string, string>): Promise<string[]> =>
      ids(await listAll(t, account.secret, query)).sort();
    const expected = (...keys: string[]): string[] => keys.map((key) => rows[key]).sort();

    it('created_from is inclusive at millisecond precision', async () => {
      await expect(search({ created_from: '2026-01-01T00:00:00.001Z' })).resolves.toEqual(expected('b', 'c'));
      await expect(search({ created_from: '2026-01-01T00:00:00.000Z' })).resolves.toEqual(expected('a', 'b', 'c'));
    });

    it('created_to is exclusive at millisecond precision', async () => {
      await expect(search({ created_to: '2026-01-01T00:00:00.001Z' })).resolves.toEqual(expected('a'));
      await expect(search({ created_to: '2026-01-02' })).resolves.toEqual(expected('a', 'b'));
    });

    it('a bound finer than a millisecond is exact against millisecond values', async () => {
      await expect(search({ created_from: '2026-01-01T00:00:00.0005Z' })).resolves.toEqual(expected('b', 'c'));
      await expect(search({ created_to: '2026-01-01T00:00:00.0005Z' })).resolves.toEqual(expected('a'));
      await expect(search({ created_to: '2026-01-01T00:00:00.001000Z' })).resolves.toEqual(expected('a'));
    });

    it('created range with equal ends is empty, and offsets are honoured', async () => {
      await expect(
        search({ created_from: '2026-01-01T00:00:00.000Z', created_to: '2026-01-01T00:00:00.000Z' }),
      ).resolves.toEqual([]);
      await expect(
        search({ created_from: '2026-01-01T01:00:00.001+01:00', created_to: '2026-01-02T01:00:00+01:00' }),
      ).resolves.toEqual(expected('b'));
    });

    it('updated_from inclusive, updated_to exclusive', async () => {
      await expect(search({ updated_from: '2026-03-01T00:00:00.000Z' })).resolves.toEqual(expected('a', 'b'));
      await expect(search({ updated_from: '2026-03-01T00:00:00.001Z' })).resolves.toEqual(expected('b'));
      await expect(search({ updated_to: '2026-03-01T00:00:00.001Z' })).resolves.toEqual(expected('a', 'c'));
      await expect(
        search({ updated_from: '2026-01-02T00:00:00Z', updated_to: '2026-03-01T00:00:00Z' }),
      ).resolves.toEqual(expected('c'));
    });
  });

  describe('sorting', () => {
    let account: CreatedAccount;
    let all: { id: string; created_at: string; updated_at: string }[];

    beforeAll(async () => {
      account = await createAccount(t);
      // Ties on both columns, so the id tie-break decides; random UUIDs so id order differs from insert order.
      const stamps = [
        '2026-02-01T00:00:00.000Z',
        '2026-02-01T00:00:00.000Z',
        '2026-02-01T00:00:00.000Z',
        '2026-02-02T00:00:00.000Z',
        '2026-01-31T00:00:00.000Z',
      ];
      for (let i = 0; i < 15; i += 1) {
        const created = stamps[i % stamps.length];
        const updated = stamps[(i * 3) % stamps.length];
        await insertVerificationRow(t.db, account.id, { created_at: created, updated_at: updated });
      }
      all = (await listAll(t, account.secret, { limit: 100 })).map(({ id, created_at, updated_at }) => ({
        id,
        created_at,
        updated_at,
      }));
      expect(all).toHaveLength(15);
    });

    it('default is -created_at with id descending on ties', async () => {
      expect(ids((await listPage(t, account.secret, { limit: 100 })).data)).toEqual(ids(sorted(all, '-created_at')));
    });

    it.each(SORTS)(
      'sort=%s orders by the column then id in the same direction, in one page and across pages',
      async (sort) => {
        const expectedOrder = ids(sorted(all, sort));
        expect(ids((await listPage(t, account.secret, { sort, limit: 100 })).data)).toEqual(expectedOrder);
        expect(ids(await listAll(t, account.secret, { sort, limit: 2 }))).toEqual(expectedOrder);
      },
    );
  });

  describe('limit and paging', () => {
    let account: CreatedAccount;

    beforeAll(async () => {
      account = await createAccount(t);
      for (let i = 0; i < 105; i += 1) {
        await insertVerificationRow(t.db, account.id, {
          created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
        });
      }
    });

    it('defaults to 20', async () => {
      const page = await listPage(t, account.secret, {});
      expect(page.data).toHaveLength(20);
      expect(page.has_more).toBe(true);
      expect(typeof page.next_cursor).toBe('string');
    });

    it('accepts 1 and 100', async () => {
      expect((await listPage(t, account.secret, { limit: 1 })).data).toHaveLength(1);
      const max = await listPage(t, account.secret, { limit: 100 });
      expect(max.data).toHaveLength(100);
      expect(max.has_more).toBe(true);
    });

    it('ends with has_more false and next_cursor null, also when the last page is exactly full', async () => {
      const first = await listPage(t, account.secret, { limit: 100 });
      const last = await listPage(t, account.secret, { limit: 5, cursor: first.next_cursor as string });
      expect(last.data).toHaveLength(5);
      expect(last.has_more).toBe(false);
      expect(last.next_cursor).toBeNull();
    });

    it('limit may change between pages', async () => {
      const everything = ids(await listAll(t, account.secret, { limit: 100 }));
      const p1 = await listPage(t, account.secret, { limit: 7 });
      const p2 = await listPage(t, account.secret, { limit: 50, cursor: p1.next_cursor as string });
      const p3 = await listPage(t, account.secret, { limit: 3, cursor: p2.next_cursor as string });
      expect([...ids(p1.data), ...ids(p2.data), ...ids(p3.data)]).toEqual(everything.slice(0, 60));
    });

    it('an empty result is a list with no cursor', async () => {
      const page = await listPage(t, account.secret, { q: 'no-such-user' });
      expect(page).toEqual({ object: 'list', data: [], has_more: false, next_cursor: null });
    });
  });

  describe('cursor walks while verifications are created', () => {
    it.each(SORTS)('sort=%s: no duplicate, no skip of a row that existed before page 1', async (sort) => {
      const account = await createAccount(t);
      const before: string[] = [];
      for (let i = 0; i < 9; i += 1) before.push((await createVerification(t, account.id)).id);
      const created: string[] = [];
      const walked = ids(
        await listAll(t, account.secret, { sort, limit: 2 }, async () => {
          created.push((await createVerification(t, account.id)).id);
        }),
      );
      expect(new Set(walked).size).toBe(walked.length);
      expect(walked.filter((id) => before.includes(id)).sort()).toEqual([...before].sort());
      expect(walked.every((id) => before.includes(id) || created.includes(id))).toBe(true);
    });

    it('with a filter and transitions moving rows into the filter, keeps the filter', async () => {
      const account = await createAccount(t);
      const approved: string[] = [];
      for (let i = 0; i < 5; i += 1) approved.push((await createVerificationInStatus(t, account.id, 'approved')).id);
      await createVerification(t, account.id);
      const walked = ids(
        await listAll(t, account.secret, { status: 'approved', limit: 2 }, async () => {
          await createVerification(t, account.id);
        }),
      );
      expect(walked.sort()).toEqual([...approved].sort());
    });
  });

  describe('invalid cursors', () => {
    let account: CreatedAccount;
    let other: CreatedAccount;
    let cursor: string;
    const query = { status: 'pending', sort: 'created_at', limit: 1 };

    beforeAll(async () => {
      account = await createAccount(t);
      other = await createAccount(t);
      for (let i = 0; i < 3; i += 1) {
        await createVerification(t, account.id, { external_user_id: 'same-user' });
        await createVerification(t, other.id, { external_user_id: 'same-user' });
      }
      cursor = (await listPage(t, account.secret, query)).next_cursor as string;
      expect(typeof cursor).toBe('string');
    });

    const get = (secret: string, q: Record<string, string | number>) =>
      t.http.get(LIST_PATH).query(q).set('authorization', `Bearer ${secret}`);

    it('the same filters and sort (another limit) accept it', async () => {
      const res = await get(account.secret, { ...query, limit: 5, cursor });
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(2);
    });

    it.each([
      ['another sort', { ...query, sort: '-created_at' }],
      ['the default sort', { status: 'pending', limit: 1 }],
      ['another status', { ...query, status: 'pending,processing' }],
      ['no status', { sort: 'created_at', limit: 1 }],
      ['an added q', { ...query, q: 'same' }],
      ['an added external_user_id', { ...query, external_user_id: 'same-user' }],
      ['an added created_from', { ...query, created_from: '2020-01-01T00:00:00Z' }],
      ['an added created_to', { ...query, created_to: '2099-01-01T00:00:00Z' }],
      ['an added updated_from', { ...query, updated_from: '2020-01-01T00:00:00Z' }],
      ['an added updated_to', { ...query, updated_to: '2099-01-01T00:00:00Z' }],
    ])('with %s is 400 invalid_cursor', async (_, q) => {
      expectError(await get(account.secret, { ...q, cursor }), 400, 'invalid_cursor', 'cursor');
    });

    it('from another account is 400 invalid_cursor', async () => {
      expectError(await get(other.secret, { ...query, cursor }), 400, 'invalid_cursor', 'cursor');
    });

    it.each([
      ['garbled', () => 'not-a-cursor'],
      ['truncated', () => cursor.slice(0, -3)],
      ['with a flipped character', () => cursor.slice(0, 4) + (cursor[4] === 'A' ? 'B' : 'A') + cursor.slice(5)],
      ['with extra text', () => `${cursor}x`],
      [
        'with a swapped payload',
        () =>
          `${Buffer.from(JSON.stringify(['2000-01-01T00:00:00.000Z', '00000000-0000-7000-8000-000000000000'])).toString('base64url')}.${cursor.split('.')[1]}`,
      ],
      ['over 512 chars', () => 'a'.repeat(600)],
    ])('%s is 400 invalid_cursor', async (_, make) => {
      expectError(await get(account.secret, { ...query, cursor: make() }), 400, 'invalid_cursor', 'cursor');
    });
  });

  it('a transition moves a row in updated_at order', async () => {
    const account = await createAccount(t);
    const first = await createVerification(t, account.id);
    const second = await createVerification(t, account.id);
    await transition(t, first.id, { status: 'processing' });
    const page = await listPage(t, account.secret, { sort: '-updated_at' });
    expect(ids(page.data)).toEqual([first.id, second.id]);
  });
});
