import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Pool } from 'pg';
import type { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import { VERIFICATION_COLUMNS, type Verification } from 'src/verifications/verification.entity';
import { DOCUMENT_TYPES, REJECTION_REASONS, VERIFICATION_STATUSES } from 'src/verifications/verification.types';

/**
 * Random verification rows as the schema admits them (not only as the API lets them in), written
 * straight to the database, and read back the way the mapper is fed: for verification-json.e2e-spec.ts.
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
export const validDate = instant.map((d) => d.toISOString().slice(0, 10));

/** An applicant field: missing, null, or any text (a valid date too, for date_of_birth). */
export const applicantValue = (extra?: fc.Arbitrary<string>) =>
  fc.option(extra ? fc.oneof(text(60), extra) : text(60), { nil: null });

/** JS lists integer-like keys ("10") first; jsonb orders keys by byte length, then bytes. */
const metadataKey = fc.oneof(text(40, 1), fc.nat({ max: 2 ** 32 }).map(String), fc.constantFrom('0', '007', '-1'));

/** A jsonb column holding JSON null, not SQL NULL: the mapper reads both as null. */
export const JSON_NULL = 'json-null';

/** SQL NULL, JSON null, or the value. */
const nullable = <T>(value: fc.Arbitrary<T>) =>
  fc.oneof(fc.constant(null), fc.constant(JSON_NULL), value, value) as fc.Arbitrary<T | null | typeof JSON_NULL>;

export interface RowFields {
  external_user_id: string;
  status: string;
  version: number;
  created_at: Date;
  updated_at: Date;
  submitted_at: Date | null;
  decided_at: Date | null;
  applicant: Record<string, string | null> | null | typeof JSON_NULL;
  document: { type: string; country: string } | null | typeof JSON_NULL;
  rejection_reasons: string[];
  metadata: Record<string, string>;
  redacted_at: Date | null;
  /** Status history entries, versions 1, 2, … in order. */
  history: { status: string; at: Date }[];
}

export const rowFields = (dateOfBirth: fc.Arbitrary<string | null>): fc.Arbitrary<RowFields> =>
  fc.record({
    external_user_id: text(50),
    status: fc.constantFrom(...VERIFICATION_STATUSES),
    version: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
    created_at: instant,
    updated_at: instant,
    submitted_at: fc.option(instant, { nil: null }),
    decided_at: fc.option(instant, { nil: null }),
    applicant: nullable(
      fc.record(
        {
          first_name: applicantValue(),
          last_name: applicantValue(),
          date_of_birth: dateOfBirth,
          email: applicantValue(text(20).map((local) => `${local}@example.com`)),
        },
        { requiredKeys: [] },
      ),
    ),
    document: nullable(
      fc.record({
        type: fc.constantFrom(...DOCUMENT_TYPES),
        country: fc.stringMatching(/^[A-Z]{2}$/),
      }),
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
    history: fc.array(fc.record({ status: fc.constantFrom(...VERIFICATION_STATUSES), at: instant }), { maxLength: 4 }),
  });

export async function insertRows(db: Pool, accountId: string, rows: RowFields[]): Promise<string[]> {
  const ids = rows.map(() => randomUUID());
  const iso = (value: Date | null) => value && value.toISOString();
  const json = (value: object | null | typeof JSON_NULL) =>
    value === JSON_NULL ? 'null' : value && JSON.stringify(value);
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
  const history = rows.flatMap((row, i) => row.history.map((entry, n) => [ids[i], n + 1, entry.status, iso(entry.at)]));
  if (history.length > 0) {
    await db.query(
      `INSERT INTO verification_status_history (verification_id, version, status, at)
       SELECT * FROM unnest($1::uuid[], $2::int[], $3::varchar[], $4::timestamptz[])`,
      [0, 1, 2, 3].map((column) => history.map((entry) => entry[column])),
    );
  }
  return ids;
}

/** Each row read as the list and detail routes read it before: pg parses dates, jsonb and arrays. */
export async function readOldWay(
  db: Pool,
  ids: string[],
): Promise<Map<string, { row: Verification; history: VerificationStatusHistory[] }>> {
  const { rows } = await db.query<Verification>(
    `SELECT ${VERIFICATION_COLUMNS} FROM verifications WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  const history = await db.query<VerificationStatusHistory>(
    `SELECT verification_id AS "verificationId", version, status, at FROM verification_status_history
      WHERE verification_id = ANY($1::uuid[]) ORDER BY version`,
    [ids],
  );
  return new Map(
    rows.map((row) => [row.id, { row, history: history.rows.filter((entry) => entry.verificationId === row.id) }]),
  );
}

export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
