import fc from 'fast-check';
import type { Pool } from 'pg';
import { isoTextSql, verificationJsonColumns } from 'src/verifications/verification-json.sql';
import { VERIFICATION_DETAIL_SQL } from 'src/verifications/verification.repository';
import type { VerificationResponseDto } from 'src/verifications/verification-response.dto';
import { toVerificationDetail, toVerificationResponse } from 'src/verifications/verification.mapper';
import { createAccount, type CreatedAccount } from './helpers/factories';
import { LIST_PATH } from './helpers/list';
import {
  applicantValue,
  compare,
  expectedText,
  insertRows,
  readOldWay,
  rowFields,
  validDate,
} from './helpers/random-verifications';
import { TestApp, startApp } from './helpers/test-app';

/**
 * The list and detail routes answer JSON text written by PostgreSQL (verification-json.sql.ts); the
 * mapper (toVerificationResponse, toVerificationDetail) writes the same verification everywhere else.
 * Both must agree on any row the schema admits, not only on what the API lets in.
 */

interface ListRow {
  id: string;
  cursor_at: string;
  json: string;
  updated_key: string;
}

async function listRows(db: Pool, ids: string[]): Promise<ListRow[]> {
  const { rows } = await db.query<ListRow>(
    `SELECT ${verificationJsonColumns('created_at')}, ${isoTextSql('updated_at')} AS updated_key
       FROM verifications WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return rows;
}

/** The same value, the same key order (top level and applicant), and the expected bytes. */
function expectSame(json: string, response: VerificationResponseDto): boolean {
  const parsed = JSON.parse(json) as VerificationResponseDto;
  expect(parsed).toStrictEqual(response);
  expect(Object.keys(parsed)).toEqual(Object.keys(response));
  if (response.applicant) expect(Object.keys(parsed.applicant ?? {})).toEqual(Object.keys(response.applicant));
  const { text, ordersAgree } = expectedText(response);
  expect(json).toBe(text);
  return ordersAgree;
}

describe('verification JSON written by PostgreSQL', () => {
  let t: TestApp;
  let account: CreatedAccount;
  beforeAll(async () => {
    t = await startApp();
    account = await createAccount(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('equals the mapper for random rows, list and detail: values, key order, JSON.stringify bytes', async () => {
    let checked = 0;
    let reordered = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowFields(applicantValue(validDate)), { minLength: 20, maxLength: 30 }),
        async (rows) => {
          const ids = await insertRows(t.db, account.id, rows);
          const old = await readOldWay(t.db, ids);
          const built = await listRows(t.db, ids);
          expect(built).toHaveLength(ids.length);
          for (const row of built) {
            const { row: verification, history } = old.get(row.id) as NonNullable<ReturnType<typeof old.get>>;
            const response = toVerificationResponse(verification);
            if (!expectSame(row.json, response)) reordered += 1;
            expect(row.cursor_at).toBe(response.created_at);
            expect(row.updated_key).toBe(response.updated_at);

            const detail = await t.db.query<{ version: number; json: string }>(VERIFICATION_DETAIL_SQL, [
              row.id,
              account.id,
            ]);
            expect(detail.rows).toHaveLength(1);
            expect(detail.rows[0].version).toBe(verification.version);
            expectSame(detail.rows[0].json, toVerificationDetail(verification, history));
            checked += 1;
          }
        },
      ),
      { numRuns: 20 },
    );
    expect(checked).toBeGreaterThanOrEqual(400);
    // Both branches of expectedText ran: metadata whose JS and jsonb key orders differ was checked too.
    expect(reordered).toBeGreaterThan(0);
  });

  it('the detail statement finds nothing for another account', async () => {
    const [id] = await insertRows(t.db, account.id, fc.sample(rowFields(validDate), { numRuns: 1 }));
    const other = await createAccount(t);
    await expect(t.db.query(VERIFICATION_DETAIL_SQL, [id, other.id])).resolves.toMatchObject({ rowCount: 0 });
  });

  it('serves random rows through the routes: list pages (every sort, with and without q) and detail', async () => {
    const owner = await createAccount(t);
    const rows = fc.sample(rowFields(fc.option(validDate, { nil: null })), { numRuns: 40 });
    // q matches every row through external_user_id, so the q walk pages through all of them too.
    const ids = await insertRows(
      t.db,
      owner.id,
      rows.map((row) => ({ ...row, external_user_id: `pj-${row.external_user_id}` })),
    );
    const old = await readOldWay(t.db, ids);
    const expected = [...old.values()].map(({ row }) => toVerificationResponse(row));
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
      const res = await t.http.get(`${LIST_PATH}/${row.id}`).set('authorization', `Bearer ${owner.secret}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toStrictEqual(toVerificationDetail(row, history));
    }
  });
});
