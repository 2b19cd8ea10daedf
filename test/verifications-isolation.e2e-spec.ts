import fc from 'fast-check';
import { createAccount, type CreatedAccount } from './helpers/factories';
import { insertVerificationRow } from './helpers/db-rows';
import { expectError } from './helpers/expect-error';
import { ids, listAll } from './helpers/list';
import { TestApp, startApp } from './helpers/test-app';

type Status = 'pending' | 'processing' | 'approved' | 'rejected';
type Sort = '-created_at' | 'created_at' | '-updated_at' | 'updated_at';

interface Row {
  id: string;
  account: number;
  external_user_id: string;
  status: Status;
  created_at: string;
  updated_at: string;
  first_name: string | null;
  last_name: string | null;
  email: string | null;
}

interface Filters {
  statuses?: Status[];
  external_user_id?: string;
  q?: string;
  created?: [string | undefined, string | undefined];
  updated?: [string | undefined, string | undefined];
  sort?: Sort;
  limit: number;
}

const STAMPS = [
  '2026-01-01T00:00:00.000Z',
  '2026-01-01T00:00:00.001Z',
  '2026-01-01T00:00:00.002Z',
  '2026-01-01T12:00:00.000Z',
  '2026-01-02T00:00:00.000Z',
];
const USER_IDS = ['user-1', 'user-2', 'USER_1', 'a%b', 'x_y'];
const FIRST = ['Ada', 'ada', 'Alan', null];
const LAST = ['Lovelace', 'Turing', 'Lo_ve', null];
const EMAILS = ['ada@x.io', 'al%n@y.io', null];
const Q = ['a', 'A', 'user', 'r-1', '_', '%', 'ada lo', 'an tu', 'lo_', '@x', 'zzz', 'a%b', 'x_y'];

const stampArb = fc.constantFrom(...STAMPS);
const rowArb = fc.record({
  external_user_id: fc.constantFrom(...USER_IDS),
  status: fc.constantFrom<Status>('pending', 'processing', 'approved', 'rejected'),
  stamps: fc.tuple(stampArb, stampArb).map(([a, b]) => (a <= b ? [a, b] : [b, a])),
  first_name: fc.constantFrom(...FIRST),
  last_name: fc.constantFrom(...LAST),
  email: fc.constantFrom(...EMAILS),
});
const rangeArb = fc.option(
  fc
    .tuple(fc.option(stampArb, { nil: undefined }), fc.option(stampArb, { nil: undefined }))
    .map(([a, b]) => (a && b && a > b ? [b, a] : [a, b]) as [string | undefined, string | undefined]),
  { nil: undefined },
);
const filtersArb: fc.Arbitrary<Filters> = fc.record(
  {
    statuses: fc.subarray<Status>(['pending', 'processing', 'approved', 'rejected'], { minLength: 1 }),
    external_user_id: fc.constantFrom(...USER_IDS),
    q: fc.constantFrom(...Q),
    created: rangeArb,
    updated: rangeArb,
    sort: fc.constantFrom<Sort>('-created_at', 'created_at', '-updated_at', 'updated_at'),
    limit: fc.integer({ min: 1, max: 4 }),
  },
  { requiredKeys: ['limit'] },
);

function searchable(row: Row): string[] {
  const fullName = [row.first_name, row.last_name].filter((part) => part !== null).join(' ');
  return [row.external_user_id, fullName, row.email ?? ''].map((part) => part.toLowerCase());
}

function inRange(value: string, range: [string | undefined, string | undefined] | undefined): boolean {
  return !range || ((range[0] === undefined || value >= range[0]) && (range[1] === undefined || value < range[1]));
}

/** The rows the contract says a caller sees, in the order it says. */
function expected(rows: Row[], account: number, f: Filters): string[] {
  const sort = f.sort ?? '-created_at';
  const column = sort.replace('-', '') as 'created_at' | 'updated_at';
  const sign = sort.startsWith('-') ? -1 : 1;
  return rows
    .filter((row) => row.account === account)
    .filter((row) => !f.statuses || f.statuses.includes(row.status))
    .filter((row) => f.external_user_id === undefined || row.external_user_id === f.external_user_id)
    .filter((row) => f.q === undefined || searchable(row).some((text) => text.includes((f.q as string).toLowerCase())))
    .filter((row) => inRange(row.created_at, f.created) && inRange(row.updated_at, f.updated))
    .sort((a, b) => sign * (a[column].localeCompare(b[column]) || a.id.localeCompare(b.id)))
    .map((row) => row.id);
}

function toQuery(f: Filters): Record<string, string | number> {
  const query: Record<string, string | number> = { limit: f.limit };
  if (f.statuses) query.status = f.statuses.join(',');
  if (f.external_user_id !== undefined) query.external_user_id = f.external_user_id;
  if (f.q !== undefined) query.q = f.q;
  if (f.created?.[0]) query.created_from = f.created[0];
  if (f.created?.[1]) query.created_to = f.created[1];
  if (f.updated?.[0]) query.updated_from = f.updated[0];
  if (f.updated?.[1]) query.updated_to = f.updated[1];
  if (f.sort) query.sort = f.sort;
  return query;
}

describe('isolation between accounts (property)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('a caller only ever sees its own rows, exactly the ones its filters select, and another account’s id is 404', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(rowArb, { maxLength: 7 }), { minLength: 2, maxLength: 3 }),
        fc.array(filtersArb, { minLength: 1, maxLength: 3 }),
        async (accountRows, filterList) => {
          const accounts: CreatedAccount[] = [];
          const rows: Row[] = [];
          for (const [index, specs] of accountRows.entries()) {
            const account = await createAccount(t);
            accounts.push(account);
            for (const spec of specs) {
              const named = spec.first_name !== null || spec.last_name !== null || spec.email !== null;
              const row = {
                external_user_id: spec.external_user_id,
                status: spec.status,
                created_at: spec.stamps[0],
                updated_at: spec.stamps[1],
                first_name: spec.first_name,
                last_name: spec.last_name,
                email: spec.email,
              };
              const applicant = named
                ? { first_name: spec.first_name, last_name: spec.last_name, date_of_birth: null, email: spec.email }
                : null;
              const id = await insertVerificationRow(t.db, account.id, { ...row, applicant });
              rows.push({ id, account: index, ...row });
            }
          }
          for (const [index, account] of accounts.entries()) {
            for (const filters of [{ limit: 3 }, ...filterList]) {
              const seen = ids(await listAll(t, account.secret, toQuery(filters)));
              expect(seen).toEqual(expected(rows, index, filters));
            }
            for (const row of rows) {
              const res = await t.http
                .get(`/api/v1/public/kyc/verifications/${row.id}`)
                .set('authorization', `Bearer ${account.secret}`);
              if (row.account === index) {
                expect(res.status).toBe(200);
                expect(res.body.id).toBe(row.id);
              } else {
                expectError(res, 404, 'not_found');
              }
            }
          }
        },
      ),
      { numRuns: 30 },
    );
  });
});
