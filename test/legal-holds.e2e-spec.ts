import { createAccount, createVerification } from './helpers/factories';
import { insertVerificationRow } from './helpers/db-rows';
import { expectError } from './helpers/expect-error';
import { ownDatabase } from './helpers/own-database';
import { metricValue, waitFor } from './helpers/poll';
import { TestApp, startApp } from './helpers/test-app';

const UNKNOWN_ID = '0193a6f2-0000-7000-8000-000000000000';
const hold = (id: string): string => `/api/v1/admin/verifications/${id}/legal-hold`;

describe('legal holds', () => {
  let database: { url: string; drop(): Promise<void> };
  let t: TestApp;
  const admin = (): string => `Bearer ${t.adminToken}`;

  beforeAll(async () => {
    // A database of its own: the worker's retention pass here must not redact other specs' rows.
    database = await ownDatabase('legal_holds');
    t = await startApp({ DATABASE_URL: database.url, PII_RETENTION_DAYS: '30', RETENTION_INTERVAL_MS: '300' });
  });

  afterAll(async () => {
    await t.close();
    await database.drop();
  });

  it('places, reads, replaces and releases a hold, each recorded; bad input is 400 and an unknown verification 404', async () => {
    const account = await createAccount(t);
    const v = await createVerification(t, account.id);
    const until = new Date(Date.now() + 86_400_000).toISOString();
    expectError(await t.http.get(hold(v.id)).set('authorization', admin()), 404, 'not_found');
    expectError(
      await t.http.put(hold(UNKNOWN_ID)).set('authorization', admin()).send({ reason: 'AML' }),
      404,
      'not_found',
    );
    for (const body of [
      { reason: '' },
      { reason: 'x'.repeat(501) },
      { reason: 'AML', until: '2020-01-01T00:00:00Z' },
      { reason: 'AML', until: 'soon' },
      { reason: 'AML', case_reference: 'c'.repeat(101) },
      { reason: 'AML', extra: 1 },
    ]) {
      expectError(await t.http.put(hold(v.id)).set('authorization', admin()).send(body), 400, 'validation_failed');
    }

    const placed = await t.http
      .put(hold(v.id))
      .set('authorization', admin())
      .send({ reason: 'AML record keeping', case_reference: 'CASE-1', until });
    expect(placed.status).toBe(200);
    expect(placed.body).toEqual({
      object: 'legal_hold',
      verification_id: v.id,
      reason: 'AML record keeping',
      case_reference: 'CASE-1',
      until,
      placed_at: expect.any(String),
      placed_by: { type: 'break_glass', id: null, name: null },
    });
    expect((await t.http.get(hold(v.id)).set('authorization', admin())).body).toEqual(placed.body);
    const replaced = await t.http.put(hold(v.id)).set('authorization', admin()).send({ reason: 'Court order' });
    expect(replaced.body).toMatchObject({ reason: 'Court order', case_reference: null, until: null });

    await t.http.delete(hold(v.id)).set('authorization', admin()).expect(204);
    expectError(await t.http.get(hold(v.id)).set('authorization', admin()), 404, 'not_found');
    const { rows } = await t.db.query(
      `SELECT action, outcome, changes FROM audit_events WHERE target_id = $1 ORDER BY sequence`,
      [v.id],
    );
    expect(rows.map((row) => row.action)).toEqual([
      'verification.legal_hold_placed',
      'verification.legal_hold_placed',
      'verification.legal_hold_released',
    ]);
    expect(JSON.stringify(rows)).not.toContain('AML');
  });

  it("refuses the client's redaction while the hold is active (409 legal_hold, recorded as denied), not after", async () => {
    const account = await createAccount(t);
    const v = await createVerification(t, account.id, { external_user_id: 'held-person' });
    const until = new Date(Date.now() + 3_600_000).toISOString();
    await t.http.put(hold(v.id)).set('authorization', admin()).send({ reason: 'AML', until }).expect(200);
    const redact = (): Promise<{ status: number; body: { error?: { message: string } } }> =>
      t.http.post(`/api/v1/public/kyc/verifications/${v.id}/redact`).set('authorization', `Bearer ${account.secret}`);

    const refused = await redact();
    expectError(refused as never, 409, 'legal_hold');
    expect(refused.body.error?.message).toContain(until);
    const row = await t.db.query('SELECT external_user_id, redacted_at FROM verifications WHERE id = $1', [v.id]);
    expect(row.rows[0]).toEqual({ external_user_id: 'held-person', redacted_at: null });
    const denied = await t.db.query(
      `SELECT actor_type, outcome FROM audit_events WHERE target_id = $1 AND action = 'verification.redacted'`,
      [v.id],
    );
    expect(denied.rows).toEqual([{ actor_type: 'client', outcome: 'denied' }]);

    await t.http.delete(hold(v.id)).set('authorization', admin()).expect(204);
    expect((await redact()).status).toBe(200);
  });

  it('retention passes a held verification over, counting it, and redacts it once the hold ends', async () => {
    const account = await createAccount(t);
    const old = new Date(Date.now() - 60 * 86_400_000).toISOString();
    // Aged only once held: a retention pass (every 300 ms) must not find it old before its hold.
    const now = new Date().toISOString();
    const held = await insertVerificationRow(t.db, account.id, { created_at: now, external_user_id: 'keep-me' });
    await t.http.put(hold(held)).set('authorization', admin()).send({ reason: 'AML' }).expect(200);
    await t.db.query('UPDATE verifications SET created_at = $2, updated_at = $2 WHERE id = $1', [held, old]);
    const free = await insertVerificationRow(t.db, account.id, { created_at: old, external_user_id: 'erase-me' });

    const redactedAt = async (id: string): Promise<string | null> =>
      (await t.db.query('SELECT redacted_at FROM verifications WHERE id = $1', [id])).rows[0].redacted_at;
    await waitFor(
      () => redactedAt(free),
      (at) => at !== null,
      'the free verification redacted',
    );
    await waitFor(
      async () =>
        metricValue((await t.http.get('/metrics')).text, 'kyc_retention_skipped_total', 'reason="legal_hold"'),
      (n) => n >= 1,
      'a skip counted',
    );
    expect(await redactedAt(held)).toBeNull();

    await t.http.delete(hold(held)).set('authorization', admin()).expect(204);
    await waitFor(
      () => redactedAt(held),
      (at) => at !== null,
      'the released verification redacted',
    );
    const system = await t.db.query(
      `SELECT actor_type FROM audit_events WHERE target_id = $1 AND action = 'verification.redacted'`,
      [held],
    );
    expect(system.rows).toEqual([{ actor_type: 'system' }]);
  });
});
