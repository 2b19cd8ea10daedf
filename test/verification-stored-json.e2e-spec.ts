import fc from 'fast-check';
import type { Pool } from 'pg';
import { VERIFICATION_COLUMNS, type Verification } from 'src/verifications/verification.entity';
import { verificationJson } from 'src/verifications/verification.mapper';
import { DOCUMENT_TYPES, REJECTION_REASONS } from 'src/verifications/verification.types';
import { cliWith } from './helpers/cli';
import { createAccount, type CreatedAccount } from './helpers/factories';
import { LIST_PATH } from './helpers/list';
import { TestApp, startApp } from './helpers/test-app';

/**
 * `verifications.response_json` is written by the mapper in the statement of every change. After
 * each write path (create, every transition, the redact route, a retention pass) the stored text of
 * every row equals, byte for byte, the mapper's text of the row as read back, and the routes answer
 * it: random verifications driven through the API, so only what the contract lets in.
 */

// Any character the contract lets into a string: no C0/C1 control character, no lone surrogate.
const char = fc
  .oneof(
    fc.constantFrom('"', '\\', '/', 'é', 'ß', '中', '😀', '\u2028', '\ufeff', "'", '<', '&', ' '),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  )
  .filter((c) => !/\p{Cc}/u.test(c));
const text = (minLength: number, maxLength: number) => fc.string({ unit: char, minLength, maxLength });

const applicant = fc.record(
  {
    first_name: fc.option(text(1, 30), { nil: null }),
    last_name: fc.option(text(1, 30), { nil: null }),
    date_of_birth: fc.option(fc.constantFrom('1990-01-31', '2000-02-29'), { nil: null }),
    email: fc.option(fc.constantFrom('ada@example.com', 'o.brien+kyc@example.org'), { nil: null }),
  },
  { requiredKeys: [] },
);

// Integer-like keys ("10") are listed first by JS; jsonb orders keys by byte length, then bytes.
const metadataKey = fc.oneof(text(1, 40), fc.nat({ max: 10_000 }).map(String), fc.constantFrom('b', 'a', 'é', 'z9'));

// Keys named like Object.prototype members are refused by the API (400). fc.dictionary adds such
// keys (`toString`, `__proto__`…) on its own, so they are dropped from the maps it makes.
const allowedKey = (key: string): boolean => key !== 'prototype' && !(key in Object.prototype);
const metadata = fc
  .dictionary(metadataKey, text(0, 60), { maxKeys: 20, noNullPrototype: true })
  .map((map) => Object.fromEntries(Object.entries(map).filter(([key]) => allowedKey(key))));

/** One verification's life: its create body, its moves, and how it ends. */
const life = fc.record({
  external_user_id: text(1, 60),
  applicant: fc.option(applicant, { nil: undefined }),
  metadata: fc.option(metadata, { nil: undefined }),
  moves: fc.array(
    fc.record({
      applicant: fc.option(applicant, { nil: undefined }),
      document: fc.option(
        fc.record({ type: fc.constantFrom(...DOCUMENT_TYPES), country: fc.constantFrom('GB', 'FR', 'US') }),
        { nil: undefined },
      ),
      decision: fc.constantFrom('approved', 'rejected', 'pending'),
      reasons: fc.subarray([...REJECTION_REASONS], { minLength: 1 }),
    }),
    { maxLength: 3 },
  ),
  end: fc.constantFrom('kept', 'kept', 'redact', 'retention'),
});

interface StoredRow extends Verification {
  response_json: string | null;
}

async function storedRows(db: Pool, ids: string[]): Promise<StoredRow[]> {
  const { rows } = await db.query<StoredRow>(
    `SELECT ${VERIFICATION_COLUMNS}, response_json FROM verifications WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  return rows;
}

describe('verifications.response_json after every write path', () => {
  let t: TestApp;
  let account: CreatedAccount;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const post = async (path: string, body: object, expected = 200) => {
    const res = await t.http.post(path).set('authorization', `Bearer ${t.internalToken}`).send(body);
    expect(res.status).toBe(expected);
    return res.body as { id: string; status: string; version: number };
  };

  /** Every row's stored text is the mapper's text of the row; the API's answers parse to it. */
  const expectStored = async (ids: string[], answers: Map<string, unknown>) => {
    const rows = await storedRows(t.db, ids);
    expect(rows).toHaveLength(ids.length);
    for (const { response_json: stored, ...row } of rows) {
      expect(stored).toBe(verificationJson(row));
      const answer = answers.get(row.id);
      if (answer !== undefined) expect(JSON.parse(stored as string)).toStrictEqual(answer);
    }
  };

  /** The detail answers the stored text, with its history appended. */
  const expectDetail = async (owner: CreatedAccount, row: StoredRow) => {
    const detail = await t.http.get(`${LIST_PATH}/${row.id}`).set('authorization', `Bearer ${owner.secret}`);
    expect(detail.status).toBe(200);
    const { status_history: history, ...fields } = detail.body as { status_history: unknown[] };
    expect(fields).toStrictEqual(JSON.parse(row.response_json as string));
    expect(history.length).toBeGreaterThanOrEqual(1);
  };

  it('equals the mapper after create, each transition, redaction and retention; the routes answer it', async () => {
    const expired: { id: string; account: CreatedAccount }[] = [];
    let checked = 0;
    const ends = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(life, { minLength: 3, maxLength: 8 }), async (lives) => {
        // An account per run: its list's first page holds this run's rows alone.
        account = await createAccount(t);
        const answers = new Map<string, unknown>();
        const ids: string[] = [];
        for (const plan of lives) {
          const created = await post(
            '/api/v1/internal/kyc/verifications',
            {
              account_id: account.id,
              external_user_id: plan.external_user_id,
              ...(plan.applicant ? { applicant: plan.applicant } : {}),
              ...(plan.metadata ? { metadata: plan.metadata } : {}),
            },
            201,
          );
          ids.push(created.id);
          answers.set(created.id, created);
          await expectStored([created.id], answers);
          let status = created.status;
          for (const move of plan.moves) {
            const next = status === 'pending' ? 'processing' : status === 'processing' ? move.decision : null;
            if (next === null) break;
            const body = {
              status: next,
              ...(next === 'rejected' ? { rejection_reasons: move.reasons } : {}),
              ...(move.applicant ? { applicant: move.applicant } : {}),
              ...(move.document ? { document: move.document } : {}),
            };
            const moved = await post(`/api/v1/internal/kyc/verifications/${created.id}/transitions`, body);
            status = moved.status;
            answers.set(created.id, moved);
            await expectStored([created.id], answers);
          }
          ends.add(plan.end);
          if (plan.end === 'redact') {
            const res = await t.http
              .post(`${LIST_PATH}/${created.id}/redact`)
              .set('authorization', `Bearer ${account.secret}`);
            expect(res.status).toBe(200);
            const { status_history: _history, ...redacted } = res.body as { status_history: unknown };
            answers.set(created.id, redacted);
            await expectStored([created.id], answers);
          }
        }

        await expectStored(ids, answers);

        // The routes send the stored text: the list's rows and each detail (its history appended).
        const listed = await t.http
          .get(LIST_PATH)
          .query({ limit: 100 })
          .set('authorization', `Bearer ${account.secret}`);
        expect(listed.status).toBe(200);
        const byId = new Map((listed.body.data as { id: string }[]).map((row) => [row.id, row]));
        for (const row of await storedRows(t.db, ids)) {
          expect(byId.get(row.id)).toStrictEqual(JSON.parse(row.response_json as string));
          await expectDetail(account, row);
          checked += 1;
        }

        // Retention: the rows to expire are aged in SQL (an update that does not write the text,
        // which the trigger answers by nulling it); one pass after every run redacts them all.
        const expiring = ids.filter((_, i) => lives[i]?.end === 'retention');
        if (expiring.length > 0) {
          await t.db.query(
            `UPDATE verifications SET decided_at = now() - interval '400 days', updated_at = now() - interval '400 days'
              WHERE id = ANY($1::uuid[])`,
            [expiring],
          );
          const aged = await storedRows(t.db, expiring);
          expect(aged.map((row) => row.response_json)).toEqual(expiring.map(() => null));
          for (const id of expiring) expired.push({ id, account });
        }
      }),
      { numRuns: 12 },
    );
    expect(checked).toBeGreaterThanOrEqual(36);
    expect([...ends].sort()).toEqual(['kept', 'redact', 'retention']);

    // One retention pass (a CLI process) for the aged rows of every run: each is redacted and its
    // text written by the pass, and the detail route answers it.
    expect(expired.length).toBeGreaterThan(0);
    const pass = await cliWith({ PII_RETENTION_DAYS: '365' }, 'retention');
    expect(pass.code).toBe(0);
    const ids = expired.map((row) => row.id);
    await expectStored(ids, new Map());
    const rows = await storedRows(t.db, ids);
    for (const row of rows) {
      expect(row.redactedAt).not.toBeNull();
      await expectDetail(expired.find((entry) => entry.id === row.id)?.account as CreatedAccount, row);
    }
  }, 240_000);
});
