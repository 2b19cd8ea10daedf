import {
  createAccount,
  createVerification,
  createVerificationInStatus,
  transition,
  type CreatedAccount,
} from './helpers/factories';
import { ISO_MS, LOWER_UUID, expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';

type Status = 'pending' | 'processing' | 'approved' | 'rejected';
const STATUSES: Status[] = ['pending', 'processing', 'approved', 'rejected'];
const ALLOWED = new Set(['pending>processing', 'processing>pending', 'processing>approved', 'processing>rejected']);
const INTERNAL = '/api/v1/internal/kyc/verifications';

describe('internal verifications: create and transitions', () => {
  let t: TestApp;
  let account: CreatedAccount;

  beforeAll(async () => {
    t = await startApp();
    account = await createAccount(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (path: string, body: object) =>
    t.http.post(path).set('authorization', `Bearer ${t.internalToken}`).send(body);
  const detail = async (id: string) => {
    const res = await t.http
      .get(`/api/v1/public/kyc/verifications/${id}`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(res.status).toBe(200);
    return res.body;
  };
  const rowState = async (id: string) => {
    const { rows } = await t.db.query(
      `SELECT v.status, v.version, v.updated_at, v.submitted_at, v.decided_at, v.applicant, v.document, v.rejection_reasons,
              (SELECT count(*) FROM verification_status_history h WHERE h.verification_id = v.id) AS history,
              (SELECT count(*) FROM webhook_events e WHERE e.verification_id = v.id) AS events
         FROM verifications v WHERE v.id = $1`,
      [id],
    );
    return rows[0];
  };

  describe('create', () => {
    it('201 with a pending verification in the contract shape, and no webhook event', async () => {
      const res = await post(INTERNAL, { account_id: account.id, external_user_id: 'user-42' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(LOWER_UUID),
        object: 'verification',
        external_user_id: 'user-42',
        status: 'pending',
        version: 1,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: res.body.created_at,
        submitted_at: null,
        decided_at: null,
        applicant: null,
        document: null,
        rejection_reasons: [],
        metadata: {},
        redacted_at: null,
      });
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      await expect(rowState(res.body.id)).resolves.toMatchObject({ history: '1', events: '0' });
      const shown = await detail(res.body.id);
      expect(shown).toEqual({
        ...res.body,
        status_history: [{ status: 'pending', at: res.body.created_at, version: 1 }],
      });
    });

    it('keeps metadata at the limits and fills missing applicant fields with null', async () => {
      const metadata = Object.fromEntries(
        Array.from({ length: 20 }, (_, i) => [`${'k'.repeat(38)}${String(i).padStart(2, '0')}`, 'v'.repeat(500)]),
      );
      const res = await post(INTERNAL, {
        account_id: account.id,
        external_user_id: 'u'.repeat(255),
        applicant: { first_name: 'Ada' },
        metadata,
      });
      expect(res.status).toBe(201);
      expect(res.body.metadata).toEqual(metadata);
      expect(res.body.external_user_id).toBe('u'.repeat(255));
      expect(res.body.applicant).toEqual({ first_name: 'Ada', last_name: null, date_of_birth: null, email: null });
    });

    it('accepts an upper-case account id', async () => {
      const res = await post(INTERNAL, { account_id: account.id.toUpperCase(), external_user_id: 'upper' });
      expect(res.status).toBe(201);
      expect((await detail(res.body.id)).id).toBe(res.body.id);
    });

    it('an unknown account is 404', async () => {
      expectError(
        await post(INTERNAL, { account_id: '0193a6f2-0000-7000-8000-000000000001', external_user_id: 'u' }),
        404,
        'not_found',
      );
    });
  });

  describe('every pair of statuses', () => {
    const pairs = STATUSES.flatMap((from) => STATUSES.map((to) => [from, to] as const));

    it.each(pairs)('%s -> %s', async (from, to) => {
      const v = await createVerificationInStatus(t, account.id, from);
      const before = await rowState(v.id);
      const body = to === 'rejected' ? { status: to, rejection_reasons: ['face_mismatch'] } : { status: to };
      const res = await post(`${INTERNAL}/${v.id}/transitions`, body);
      if (ALLOWED.has(`${from}>${to}`)) {
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ id: v.id, status: to, version: v.version + 1 });
        expect(res.body.updated_at >= v.updated_at).toBe(true);
        await expect(rowState(v.id)).resolves.toMatchObject({
          history: String(v.version + 1),
          events: String(v.version),
        });
      } else {
        expectError(res, 409, 'invalid_transition', 'status');
        await expect(rowState(v.id)).resolves.toEqual(before);
        // A forbidden move is 409 whatever it carries: the reasons rules (400) are about allowed moves.
        const odd = to === 'rejected' ? { status: to } : { status: to, rejection_reasons: ['face_mismatch'] };
        expectError(await post(`${INTERNAL}/${v.id}/transitions`, odd), 409, 'invalid_transition', 'status');
        await expect(rowState(v.id)).resolves.toEqual(before);
      }
    });
  });

  describe('expected_version', () => {
    it('a mismatch is 409 version_conflict and changes nothing', async () => {
      const v = await createVerificationInStatus(t, account.id, 'processing');
      const before = await rowState(v.id);
      expectError(
        await post(`${INTERNAL}/${v.id}/transitions`, { status: 'approved', expected_version: 1 }),
        409,
        'version_conflict',
        'expected_version',
      );
      expectError(
        await post(`${INTERNAL}/${v.id}/transitions`, { status: 'approved', expected_version: 3 }),
        409,
        'version_conflict',
        'expected_version',
      );
      // 0 is no version a verification ever has (they start at 1), so it never matches: a conflict, not bad input.
      expectError(
        await post(`${INTERNAL}/${v.id}/transitions`, { status: 'approved', expected_version: 0 }),
        409,
        'version_conflict',
        'expected_version',
      );
      await expect(rowState(v.id)).resolves.toEqual(before);
    });

    it('is checked before the transition itself', async () => {
      const v = await createVerificationInStatus(t, account.id, 'approved');
      expectError(
        await post(`${INTERNAL}/${v.id}/transitions`, { status: 'pending', expected_version: 1 }),
        409,
        'version_conflict',
      );
      expectError(
        await post(`${INTERNAL}/${v.id}/transitions`, { status: 'pending', expected_version: 3 }),
        409,
        'invalid_transition',
      );
    });

    it('a match lets the move through', async () => {
      const v = await createVerification(t, account.id);
      const res = await post(`${INTERNAL}/${v.id}/transitions`, { status: 'processing', expected_version: 1 });
      expect(res.status).toBe(200);
      expect(res.body.version).toBe(2);
    });

    it('of two concurrent moves from the same version, exactly one wins', async () => {
      const v = await createVerificationInStatus(t, account.id, 'processing');
      const results = await Promise.all([
        post(`${INTERNAL}/${v.id}/transitions`, { status: 'approved', expected_version: 2 }),
        post(`${INTERNAL}/${v.id}/transitions`, {
          status: 'rejected',
          rejection_reasons: ['other'],
          expected_version: 2,
        }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
      await expect(rowState(v.id)).resolves.toMatchObject({ version: 3, history: '3', events: '2' });
    });
  });

  describe('timestamps and history', () => {
    it('submitted_at, decided_at and status_history follow the contract through a retake', async () => {
      const created = await createVerification(t, account.id);
      const submitted = await transition(t, created.id, { status: 'processing' });
      expect(submitted.submitted_at).toBe(submitted.updated_at);
      expect(submitted.decided_at).toBeNull();

      const retake = await transition(t, created.id, { status: 'pending' });
      expect(retake.submitted_at).toBe(submitted.submitted_at);
      expect(retake.decided_at).toBeNull();

      await new Promise((resolve) => setTimeout(resolve, 5));
      const resubmitted = await transition(t, created.id, { status: 'processing' });
      expect(resubmitted.submitted_at).toBe(resubmitted.updated_at);
      expect(resubmitted.submitted_at).not.toBe(submitted.submitted_at);

      const rejected = await transition(t, created.id, {
        status: 'rejected',
        rejection_reasons: ['document_expired', 'underage'],
      });
      expect(rejected).toMatchObject({
        version: 5,
        submitted_at: resubmitted.submitted_at,
        decided_at: rejected.updated_at,
        rejection_reasons: ['document_expired', 'underage'],
      });

      const shown = await detail(created.id);
      const { status_history: history, ...rest } = shown;
      expect(rest).toEqual(rejected);
      expect(history).toEqual([
        { status: 'pending', at: created.created_at, version: 1 },
        { status: 'processing', at: submitted.updated_at, version: 2 },
        { status: 'pending', at: retake.updated_at, version: 3 },
        { status: 'processing', at: resubmitted.updated_at, version: 4 },
        { status: 'rejected', at: rejected.updated_at, version: 5 },
      ]);
      for (const entry of history as { at: string }[]) expect(entry.at).toMatch(ISO_MS);
      const ats = (history as { at: string }[]).map((entry) => entry.at);
      expect([...ats].sort()).toEqual(ats);
    });

    it('approved has no rejection reasons and a decided_at', async () => {
      const v = await createVerificationInStatus(t, account.id, 'approved');
      expect(v).toMatchObject({ status: 'approved', version: 3, rejection_reasons: [], decided_at: v.updated_at });
      expect(v.submitted_at).toMatch(ISO_MS);
    });
  });

  describe('applicant and document via transitions', () => {
    it('merges applicant fields, sets the document, and shows both on the detail route', async () => {
      const v = await createVerification(t, account.id, { applicant: { first_name: 'Ada', last_name: 'Byron' } });
      const moved = await transition(t, v.id, {
        status: 'processing',
        applicant: { last_name: 'Lovelace', date_of_birth: '1815-12-10', email: 'ada@example.com' },
        document: { type: 'passport', country: 'GB' },
      });
      expect(moved.applicant).toEqual({
        first_name: 'Ada',
        last_name: 'Lovelace',
        date_of_birth: '1815-12-10',
        email: 'ada@example.com',
      });
      expect(moved.document).toEqual({ type: 'passport', country: 'GB' });
      const cleared = await transition(t, v.id, {
        status: 'approved',
        applicant: { email: null },
        document: { type: 'id_card', country: 'FR' },
      });
      expect(cleared.applicant).toEqual({
        first_name: 'Ada',
        last_name: 'Lovelace',
        date_of_birth: '1815-12-10',
        email: null,
      });
      expect(cleared.document).toEqual({ type: 'id_card', country: 'FR' });
      expect((await detail(v.id)).document).toEqual({ type: 'id_card', country: 'FR' });
    });

    it('keeps applicant and document when a transition does not mention them', async () => {
      const v = await createVerification(t, account.id, { applicant: { first_name: 'Grace' } });
      await transition(t, v.id, { status: 'processing', document: { type: 'residence_permit', country: 'US' } });
      const approved = await transition(t, v.id, { status: 'approved' });
      expect(approved.applicant).toEqual({ first_name: 'Grace', last_name: null, date_of_birth: null, email: null });
      expect(approved.document).toEqual({ type: 'residence_permit', country: 'US' });
    });

    it('a refused move does not apply its applicant or document either', async () => {
      const v = await createVerification(t, account.id);
      const before = await rowState(v.id);
      expectError(
        await post(`${INTERNAL}/${v.id}/transitions`, {
          status: 'approved',
          applicant: { first_name: 'X' },
          document: { type: 'passport', country: 'GB' },
        }),
        409,
        'invalid_transition',
      );
      await expect(rowState(v.id)).resolves.toEqual(before);
    });
  });
});
