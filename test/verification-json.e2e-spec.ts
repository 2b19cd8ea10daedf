import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Pool } from 'pg';
import { VERIFICATION_COLUMNS, type Verification } from 'src/verifications/verification.entity';
import { isoTextSql, verificationJsonColumns } from 'src/verifications/verification-json.sql';
import type { VerificationResponseDto } from 'src/verifications/verification-response.dto';
import { toVerificationResponse } from 'src/verifications/verification.mapper';
import { DOCUMENT_TYPES, REJECTION_REASONS, VERIFICATION_STATUSES } from 'src/verifications/verification.types';
import { createAccount, type CreatedAccount } from './helpers/factories';
import { LIST_PATH } from './helpers/list';
import { TestApp, startApp } from './helpers/test-app';

/**
 * The list route's rows are JSON text written by PostgreSQL (verification-json.sql.ts); the mapper
 * (toVerificationResponse) writes the same verification everywhere else. Both must agree on any row
 * the schema admits, not only on what the API lets in.
 */

// Characters JSON escapes differently from plain text, or that are easy to get wrong in UTF-8. NUL
// is left out: PostgreSQL's text and jsonb cannot hold it.
const TRICKY = ['"', '\\', '/', '\b', '\f', '\n', '\r', '\t', '\u0001', '\u001f', '\u007f', '\u0080', '\u009f'];
const TRICKY_UNICODE = ['\u2028', '\u2029', '\ufeff', 'é', 'ß', '中', '😀', '👩‍👩‍👧', '\u{10ffff}', "'", '<&>'];
const char = fc.oneof(
  fc.constantFrom(...TRICKY, ...TRICKY_UNICODE),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\u0000'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }).filter((c) => c !== '\u0000'),
);
const text = (maxLength: number, minLength = 0) => fc.string({ unit: char, minLength, maxLength });

const instant = fc.date({
  min: new Date('1970-01-01T00:00:00.000Z'),
  max: new Date('2999-12-31T23:59:59.999Z'),
  noInvalidDate: true,
});
const validDate = instant.map((d) => d.toISOString().slice(0, 10));

/** An applicant field: missing, null, or any text (a valid date too, for date_of_birth). */
const applicantValue = (extra?: fc.Arbitrary<string>) =>
  fc.option(extra ? fc.oneof(text(60), extra) : text(60), { nil: null });

/** JS lists integer-like keys ("10") first; jsonb orders keys by byte length, then bytes. */
const metadataKey = fc.oneof(text(40, 1), fc.nat({ max: 2 ** 32 }).map(String), fc.constantFrom('0', '007', '-1'));

interface RowFields {
  external_user_id: string;
  status: string;
  version: number;
  created_at: Date;
  updated_at: Date;
  submitted_at: Date | null;
  decided_at: Date | null;
  applicant: Record<string, string | null> | null;
  document: { type: string; country: string } | null;
  rejection_reasons: string[];
  metadata: Record<string, string>;
  redacted_at: Date | null;
}

const rowFields = (dateOfBirth: fc.Arbitrary<string | null>): fc.Arbitrary<RowFields> =>
  fc.record({
    external_user_id: text(50),
    status: fc.constantFrom(...VERIFICATION_STATUSES),
    version: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    created_at: instant,
    updated_at: instant,
    submitted_at: fc.option(instant, { nil: null }),
    decided_at: fc.option(instant, { nil: null }),
    applicant: fc.option(
      fc.record(
        {
          first_name: applicantValue(),
          last_name: applicantValue(),
          date_of_birth: dateOfBirth,
          email: applicantValue(text(20).map((local) => `${local}@example.com`)),
        },
        { requiredKeys: [] },
      ),
      { nil: null },
    ),
    document: fc.option(
      fc.record({
        type: fc.constantFrom(...DOCUMENT_TYPES),
        country: fc.stringMatching(/^[A-Z]{2}$/),
      }),
      { nil: null },
    ),
    rejection_reasons: fc.oneof(
      fc.constant<string[]>([]),
      fc.subarray<string>([...REJECTION_REASONS], { minLength: 1 }),
    ),
    metadata: fc.oneof(
      fc.constant({}),
      fc.dictionary(metadataKey, text(80), { minKeys: 1, maxKeys: 20, noNullPrototype: true }),
    ),
    redacted_at: fc.option(instant, { nil: null }),
  });

async function insertRows(db: Pool, accountId: string, rows: RowFields[]): Promise<string[]> {
  const ids = rows.map(() => randomUUID());
  const iso = (value: Date | null) => value && value.toISOString();
  const json = (value: object | null) => value && JSON.stringify(value);
  await Promise.all(
    rows.map((row, i) =>
      db.query(
        `INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at,
           submitted_at, decided_at, applicant, document, rejection_reasons, metadata, redacted_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
        [
          ids[i],
          accountId,
          row.external_user_id,
          row.status,
          row.version,
          iso(row.created_at),
          iso(row.updated_at),
          iso(row.submitted_at),
          iso(row.decided_at),
          json(row.applicant),
          json(row.document),
          row.rejection_reasons,
          JSON.stringify(row.metadata),
          iso(row.redacted_at),
        ],
      ),
    ),
  );
  return ids;
}

/** The mapper's answer for each row, read as the list route read it before (pg parses dates and jsonb). */
async function mapped(db: Pool, ids: string[]): Promise<Map<string, VerificationResponseDto>> {
  const { rows } = await db.query<Verification>(
    `SELECT ${VERIFICATION_COLUMNS} FROM verifications WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, toVerificationResponse(row)]));
}

interface BuiltRow {
  id: string;
  cursor_at: string;
  json: string;
  updated_key: string;
}

async function built(db: Pool, ids: string[]): Promise<BuiltRow[]> {
  const { rows } = await db.query<BuiltRow>(
    `SELECT ${verificationJsonColumns('created_at')}, ${isoTextSql('updated_at')} AS updated_key
       FROM verifications WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return rows;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** jsonb keeps (and writes) object keys sorted by byte length, then bytewise. */
function jsonbKeyOrder(a: string, b: string): number {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length - y.length || Buffer.compare(x, y);
}

/**
 * The bytes the SQL must write. JSON.stringify writes an object's keys in JS property order, which
 * puts integer-like keys ("10") first in ascending number order; PostgreSQL writes metadata in jsonb's
 * order. Where the two orders agree, the SQL text is exactly JSON.stringify of the mapper's answer;
 * where they differ (only metadata can hold such keys), the expected text writes metadata in jsonb's
 * order. Clients parse JSON, so the order of map keys carries no meaning.
 */
function expectedText(response: VerificationResponseDto): { text: string; ordersAgree: boolean } {
  const jsOrder = Object.keys(response.metadata);
  const jsonbOrder = [...jsOrder].sort(jsonbKeyOrder);
  const ordersAgree = jsOrder.every((key, i) => key === jsonbOrder[i]);
  if (ordersAgree) return { text: JSON.stringify(response), ordersAgree };
  const metadata = `{${jsonbOrder.map((key) => `${JSON.stringify(key)}:${JSON.stringify(response.metadata[key])}`).join(',')}}`;
  const marker = `metadata-${randomUUID()}`;
  return {
    text: JSON.stringify({ ...response, metadata: marker }).replace(JSON.stringify(marker), () => metadata),
    ordersAgree,
  };
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

  it('equals the mapper: values, key order, and the bytes of JSON.stringify, for random rows', async () => {
    let checked = 0;
    let reordered = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowFields(applicantValue(validDate)), { minLength: 20, maxLength: 30 }),
        async (rows) => {
          const ids = await insertRows(t.db, account.id, rows);
          const expected = await mapped(t.db, ids);
          const rowsBuilt = await built(t.db, ids);
          expect(rowsBuilt).toHaveLength(ids.length);
          for (const row of rowsBuilt) {
            const response = expected.get(row.id) as VerificationResponseDto;
            const parsed = JSON.parse(row.json) as VerificationResponseDto;
            expect(parsed).toStrictEqual(response);
            expect(Object.keys(parsed)).toEqual(Object.keys(response));
            if (response.applicant)
              expect(Object.keys(parsed.applicant ?? {})).toEqual(Object.keys(response.applicant));
            const { text: bytes, ordersAgree } = expectedText(response);
            expect(row.json).toBe(bytes);
            expect(row.cursor_at).toBe(response.created_at);
            expect(row.updated_key).toBe(response.updated_at);
            checked += 1;
            if (!ordersAgree) reordered += 1;
          }
        },
      ),
      { numRuns: 20 },
    );
    expect(checked).toBeGreaterThanOrEqual(400);
    // The key-order branch of expectedText ran, so both of its cases were checked.
    expect(reordered).toBeGreaterThan(0);
  });

  it('serves those rows through the list route, every sort and q, page by page as the mapper writes them', async () => {
    const owner = await createAccount(t);
    const rows = fc.sample(rowFields(fc.option(validDate, { nil: null })), { numRuns: 40 });
    // q matches every row through external_user_id, so the q walk pages through all of them too.
    const ids = await insertRows(
      t.db,
      owner.id,
      rows.map((row) => ({ ...row, external_user_id: `pj-${row.external_user_id}` })),
    );
    const expected = await mapped(t.db, ids);
    for (const sort of ['-created_at', 'created_at', '-updated_at', 'updated_at']) {
      for (const query of [{ sort }, { sort, q: 'pj-' }]) {
        const column = sort.replace('-', '') as 'created_at' | 'updated_at';
        const sign = sort.startsWith('-') ? -1 : 1;
        const order = [...expected.values()].sort(
          (a, b) => sign * (compare(a[column], b[column]) || compare(a.id, b.id)),
        );
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
  });
});
