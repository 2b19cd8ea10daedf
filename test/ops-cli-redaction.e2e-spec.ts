import type { Pool } from 'pg';
import { cli, cliWith } from './helpers/cli';
import { dbSnapshot } from './helpers/expect-error';
import { createAccount, createVerificationInStatus } from './helpers/factories';
import { startApp, TestApp } from './helpers/test-app';

const UNKNOWN_ID = '0193a6f2-0000-7000-8000-000000000000';
const POLICY_30_90 =
  'Policy: verifications redacted after 30 days (PII_RETENTION_DAYS); delivered and failed webhook events deleted ' +
  'after 90 days (WEBHOOK_EVENT_RETENTION_DAYS).\n';

async function count(db: Pool, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return rows[0].n;
}

/** Moves a decided verification `days` into the past (decided_at and every other timestamp). */
async function age(db: Pool, id: string, days: number): Promise<void> {
  await db.query(
    `UPDATE verifications
        SET created_at = now() - make_interval(days => $2 + 1), submitted_at = now() - make_interval(days => $2),
            decided_at = now() - make_interval(days => $2), updated_at = now() - make_interval(days => $2)
      WHERE id = $1`,
    [id, days],
  );
}

describe('operations CLI: redact and retention', () => {
  let t: TestApp;

  beforeAll(async () => {
    // API only: the CLI's events wait in the queue, and no retention pass runs but the CLI's.
    t = await startApp({ APP_ROLE: 'api' });
  });

  afterAll(async () => {
    await t.close();
  });

  it('redact <verification-id> prints the redacted verification and creates one event; again changes nothing', async () => {
    const account = await createAccount(t, { webhook_url: null });
    const v = await createVerificationInStatus(t, account.id, 'rejected', {
      external_user_id: 'cli-redact-user',
      applicant: { first_name: 'Ada', last_name: 'Clilovelace', email: 'ada.cli@example.com' },
      metadata: { plan: 'cli-gold' },
    });

    const first = await cli('redact', v.id);
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    const printed = JSON.parse(first.stdout) as Record<string, unknown>;
    const detail = await t.http
      .get(`/api/v1/public/kyc/verifications/${v.id}`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(printed).toEqual(detail.body);
    expect(printed).toMatchObject({
      id: v.id,
      status: 'rejected',
      version: 3,
      external_user_id: '[redacted]',
      applicant: null,
      document: null,
      metadata: {},
      rejection_reasons: ['other'],
      decided_at: v.decided_at,
      created_at: v.created_at,
    });
    expect(printed.status_history).toHaveLength(3);
    expect(printed.redacted_at).toEqual(expect.any(String));
    expect(printed.updated_at).toBe(printed.redacted_at);
    for (const value of ['cli-redact-user', 'Clilovelace', 'ada.cli@example.com', 'cli-gold']) {
      expect(await count(t.db, `verifications v WHERE v::text ILIKE $1`, [`%${value}%`])).toBe(0);
      expect(await count(t.db, `webhook_events WHERE body ILIKE $1`, [`%${value}%`])).toBe(0);
    }
    const redactedEvents = async () =>
      (
        await t.db.query<{ body: string }>(
          `SELECT body FROM webhook_events WHERE verification_id = $1 AND type = 'verification.redacted'`,
          [v.id],
        )
      ).rows.map((row) => JSON.parse(row.body) as { data: Record<string, unknown> });
    const { status_history: _history, ...withoutHistory } = printed;
    expect(await redactedEvents()).toEqual([
      expect.objectContaining({ data: { reason: 'client_request', verification: withoutHistory } }),
    ]);

    const before = await dbSnapshot(t.db);
    const again = await cli('redact', v.id.toUpperCase());
    expect(again).toEqual({ code: 0, stdout: first.stdout, stderr: '' });
    expect(await dbSnapshot(t.db)).toEqual(before);
    expect(await redactedEvents()).toHaveLength(1);
  });

  it('redact and retention refuse bad arguments with one line: 2 for bad usage or a malformed id, 1 for an unknown one', async () => {
    const cases: [string[], number, RegExp][] = [
      [['redact', 'not-a-uuid'], 2, /^error: redact: <verification-id> must be a UUID /],
      [['redact', UNKNOWN_ID], 1, /^error: No such verification$/],
      [['redact'], 2, /^error: redact: missing <verification-id> /],
      [['retention', '--dry-run=x'], 2, /^error: retention: --dry-run takes no value /],
      [['retention', '--force'], 2, /^error: retention: unknown option --force /],
    ];
    const before = await dbSnapshot(t.db);
    const results = await Promise.all(cases.map(([args]) => cli(...args)));
    results.forEach((result, i) => {
      const [args, code, message] = cases[i];
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code, stdout: '' });
      expect(result.stderr.trimEnd()).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    });
    expect(await dbSnapshot(t.db)).toEqual(before);
  });

  it('retention --dry-run only counts; retention runs the pass and prints what it did', async () => {
    const db = t.db;
    const account = await createAccount(t, { webhook_url: null });
    const old = [
      await createVerificationInStatus(t, account.id, 'approved'),
      await createVerificationInStatus(t, account.id, 'rejected'),
    ];
    const young = await createVerificationInStatus(t, account.id, 'approved');
    for (const v of old) await age(db, v.id, 31);
    await age(db, young.id, 29);
    // Events without a webhook URL fail at once: old[0]'s two are finished and 91 days old.
    await db.query(`UPDATE webhook_events SET created_at = now() - interval '91 days' WHERE verification_id = $1`, [
      old[0].id,
    ]);
    const pending = await createVerificationInStatus(t, account.id, 'processing');
    await db.query(
      `UPDATE webhook_events SET delivery_status = 'pending', next_attempt_at = now() + interval '1 day',
              created_at = now() - interval '91 days' WHERE verification_id = $1`,
      [pending.id],
    );
    // What other tests of this run left in the past is this pass's work too.
    const others = {
      verifications: await count(
        db,
        `verifications WHERE redacted_at IS NULL AND coalesce(decided_at, updated_at) < now() - interval '30 days'
            AND account_id <> $1`,
        [account.id],
      ),
      events: await count(
        db,
        `webhook_events WHERE delivery_status <> 'pending' AND created_at < now() - interval '90 days'
            AND account_id <> $1`,
        [account.id],
      ),
    };
    const verifications = others.verifications + 2;
    const events = others.events + 2;
    const env = { PII_RETENTION_DAYS: '30' };
    const dryRun = (n: number, m: number) =>
      `${POLICY_30_90}Dry run, nothing changed: a pass now would redact ${n} verification(s) and delete ${m} ` +
      'delivered or failed webhook event(s) (pending events are never deleted).\n';

    const redactedCount = () => count(db, `verifications WHERE redacted_at IS NOT NULL`);
    const before = { ...(await dbSnapshot(db)), redacted: await redactedCount() };
    const preview = await cliWith(env, 'retention', '--dry-run');
    expect(preview).toEqual({ code: 0, stdout: dryRun(verifications, events), stderr: '' });
    const off = await cli('retention', '--dry-run');
    expect(off.code).toBe(0);
    expect(off.stdout).toMatch(
      /^Policy: PII_RETENTION_DAYS=0: no redaction; .*\nDry run, nothing changed: a pass now would redact 0 verification\(s\)/,
    );
    expect({ ...(await dbSnapshot(db)), redacted: await redactedCount() }).toEqual(before);

    const run = await cliWith(env, 'retention');
    expect(run).toEqual({
      code: 0,
      stdout:
        `${POLICY_30_90}Redacted ${verifications} verification(s); deleted ${events} webhook event(s). ` +
        "Their verification.redacted events go out from the workers, each account's in turn.\n",
      stderr: '',
    });
    const { rows } = await db.query<{ id: string; redacted: boolean; reasons: string[] }>(
      `SELECT v.id, v.redacted_at IS NOT NULL AS redacted,
              array(SELECT e.body::jsonb #>> '{data,reason}' FROM webhook_events e
                     WHERE e.verification_id = v.id AND e.type = 'verification.redacted') AS reasons
         FROM verifications v WHERE v.account_id = $1`,
      [account.id],
    );
    const byId = new Map(rows.map((row) => [row.id, { redacted: row.redacted, reasons: row.reasons }]));
    expect(byId.get(old[0].id)).toEqual({ redacted: true, reasons: ['retention'] });
    expect(byId.get(old[1].id)).toEqual({ redacted: true, reasons: ['retention'] });
    expect(byId.get(young.id)).toEqual({ redacted: false, reasons: [] });
    expect(byId.get(pending.id)).toEqual({ redacted: false, reasons: [] });
    expect(
      await count(db, `webhook_events WHERE verification_id = $1 AND type = 'verification.status_changed'`, [
        old[0].id,
      ]),
    ).toBe(0);
    expect(await count(db, `webhook_events WHERE verification_id = $1`, [pending.id])).toBe(1);

    expect(await cliWith(env, 'retention', '--dry-run')).toEqual({ code: 0, stdout: dryRun(0, 0), stderr: '' });
  });
});
