import fc from 'fast-check';
import type { Pool } from 'pg';
import { VERIFICATION_DETAIL_SQL } from 'src/verifications/verification.repository';
import { toVerificationDetail, verificationDetailJson, verificationJson } from 'src/verifications/verification.mapper';
import { cliWith } from './helpers/cli';
import { createAccount, type CreatedAccount } from './helpers/factories';
import { LIST_PATH } from './helpers/list';
import { applicantValue, compare, insertRows, readOldWay, rowFields, validDate } from './helpers/random-verifications';
import { TestApp, startApp } from './helpers/test-app';

/**
 * Rows as the schema admits them (not only as the API lets them in), written straight to the table
 * without their stored text, as the release before the column writes them: the routes render them
 * from their columns, `render-json` (the fill migration's writer) stores the mapper's text byte for
 * byte, and the routes answer the same before and after.
 */

async function storedTexts(db: Pool, ids: string[]): Promise<Map<string, string | null>> {
  const { rows } = await db.query<{ id: string; response_json: string | null }>(
    `SELECT id, response_json FROM verifications WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.response_json]));
}

describe('verification JSON of rows written without their stored text', () => {
  let t: TestApp;
  let account: CreatedAccount;
  beforeAll(async () => {
    t = await startApp();
    account = await createAccount(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it("render-json stores the mapper's text for random rows, byte for byte, and only where it was missing", async () => {
    let checked = 0;
    let reordered = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowFields(applicantValue(validDate)), { minLength: 20, maxLength: 30 }),
        async (rows) => {
          const ids = await insertRows(t.db, account.id, rows);
          expect([...(await storedTexts(t.db, ids)).values()].every((text) => text === null)).toBe(true);
          const run = await cliWith({}, 'render-json', '--batch-size', '7');
          expect(run.stderr).toBe('');
          expect(run.stdout).toMatch(/^Wrote the stored JSON of \d+ verification\(s\) in \d+ batch\(es\)\.\n$/);
          const stored = await storedTexts(t.db, ids);
          for (const { row } of (await readOldWay(t.db, ids)).values()) {
            const text = stored.get(row.id);
            expect(text).toBe(verificationJson(row));
            // Integer-like metadata keys: JS lists them first, whatever order jsonb keeps.
            if (Object.keys(row.metadata).some((key) => /^(0|[1-9]\d*)$/.test(key))) reordered += 1;
            checked += 1;
          }
        },
      ),
      { numRuns: 8 },
    );
    expect(checked).toBeGreaterThanOrEqual(160);
    expect(reordered).toBeGreaterThan(0);
    const again = await cliWith({}, 'render-json');
    expect(again.stdout).toBe('Wrote the stored JSON of 0 verification(s) in 0 batch(es).\n');
  });

  it('the detail statement finds nothing for another account', async () => {
    const [id] = await insertRows(t.db, account.id, fc.sample(rowFields(validDate), { numRuns: 1 }));
    const other = await createAccount(t);
    await expect(t.db.query(VERIFICATION_DETAIL_SQL, [id, other.id])).resolves.toMatchObject({ rowCount: 0 });
  });

  it('an update that does not write the text (an older release) nulls it, and the routes render the row', async () => {
    // A version the update can raise: fast-check favours the bounds, and 2^31 - 1 + 1 is out of range.
    const raisable = rowFields(validDate).filter((row) => row.version < 2 ** 31 - 1);
    const [id] = await insertRows(t.db, account.id, fc.sample(raisable, { numRuns: 1 }));
    await cliWith({}, 'render-json');
    const before = (await storedTexts(t.db, [id])).get(id);
    expect(before).not.toBeNull();
    await t.db.query(`UPDATE verifications SET status = 'processing', version = version + 1 WHERE id = $1`, [id]);
    expect((await storedTexts(t.db, [id])).get(id)).toBeNull();
    const res = await t.http.get(`${LIST_PATH}/${id}`).set('authorization', `Bearer ${account.secret}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: 'processing', version: JSON.parse(before as string).version + 1 });
  });

  it('serves random rows through the routes, rendered on read and then stored: list pages (every sort, with and without q) and detail', async () => {
    const owner = await createAccount(t);
    const rows = fc.sample(rowFields(fc.option(validDate, { nil: null })), { numRuns: 40 });
    // q matches every row through external_user_id, so the q walk pages through all of them too.
    const ids = await insertRows(
      t.db,
      owner.id,
      rows.map((row) => ({ ...row, external_user_id: `pj-${row.external_user_id}` })),
    );
    const old = await readOldWay(t.db, ids);
    const expected = [...old.values()].map(({ row }) => JSON.parse(verificationJson(row)) as Record<string, string>);
    for (const stage of ['rendered on read', 'stored']) {
      if (stage === 'stored') await cliWith({}, 'render-json');
      const stored = [...(await storedTexts(t.db, ids)).values()];
      expect(stored.every((text) => (stage === 'stored' ? text !== null : text === null))).toBe(true);
      for (const sort of ['-created_at', 'created_at', '-updated_at', 'updated_at']) {
        for (const query of [{ sort }, { sort, q: 'pj-' }]) {
          const column = sort.replace('-', '') as 'created_at' | 'updated_at';
          const sign = sort.startsWith('-') ? -1 : 1;
          const order = [...expected].sort((a, b) => sign * (compare(a[column], b[column]) || compare(a.id, b.id)));
          const seen: unknown[] = [];
          let cursor: string | undefined;
          do {
            const res = await t.http
              .get(LIST_PATH)
              .query({ ...query, limit: 7, ...(cursor ? { cursor } : {}) })
              .set('authorization', `Bearer ${owner.secret}`);
            expect(res.status).toBe(200);
            expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
            expect(Object.keys(res.body as object)).toEqual(['object', 'data', 'has_more', 'next_cursor']);
            seen.push(...(res.body.data as unknown[]));
            cursor = res.body.has_more ? (res.body.next_cursor as string) : undefined;
            if (!res.body.has_more) expect(res.body.next_cursor).toBeNull();
          } while (cursor);
          expect(seen).toStrictEqual(order);
        }
      }
      for (const { row, history } of old.values()) {
        // The same bytes rendered on read or stored: the mapper's text with the history appended.
        const res = await t.http.get(`${LIST_PATH}/${row.id}`).set('authorization', `Bearer ${owner.secret}`);
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.text).toBe(verificationDetailJson(verificationJson(row), history));
        expect(res.body).toStrictEqual(toVerificationDetail(row, history));
      }
    }
  });
});
