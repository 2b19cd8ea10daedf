import { spawn } from 'node:child_process';
import type { Pool } from 'pg';
import { createAccount, createVerificationInStatus } from './helpers/factories';
import { jsonLines } from './helpers/ops-infra';
import { metricValue, waitFor } from './helpers/poll';
import { MAIN_JS, startApp, TestApp } from './helpers/test-app';
import { verifySignature, WebhookReceiver } from './helpers/webhook-receiver';

/** A worker that runs a retention pass every 200 ms: PII kept 30 days, finished events 90. */
const RETENTION_WORKER = {
  APP_ROLE: 'worker',
  PII_RETENTION_DAYS: '30',
  WEBHOOK_EVENT_RETENTION_DAYS: '90',
  RETENTION_INTERVAL_MS: '200',
  // Flat out: these cases are about what a pass does, not its pace (a batch held on a lock would rest 32 times as long at the default).
  RETENTION_BUDGET_PERCENT: '100',
  WEBHOOK_RETRY_SCHEDULE: '100ms',
  LOG_LEVEL: 'info',
};

const AGED_VERIFICATIONS = `redacted_at IS NULL AND coalesce(decided_at, updated_at) < now() - interval '30 days'`;
const AGED_EVENTS = `delivery_status <> 'pending' AND created_at < now() - interval '90 days'`;

/**
 * Moves a verification into the past: `updated` days for updated_at (and submitted_at), `decided`
 * days for decided_at when it has one.
 */
async function age(db: Pool, id: string, days: { updated: number; decided?: number }): Promise<void> {
  await db.query(
    `UPDATE verifications
        SET created_at = now() - interval '400 days',
            updated_at = now() - make_interval(days => $2),
            submitted_at = CASE WHEN submitted_at IS NULL THEN NULL ELSE now() - make_interval(days => $2) END,
            decided_at = CASE WHEN decided_at IS NULL THEN NULL ELSE now() - make_interval(days => $3) END
      WHERE id = $1`,
    [id, days.updated, days.decided ?? days.updated],
  );
}

async function ageEvents(db: Pool, ids: string[], days: number): Promise<void> {
  await db.query(
    `UPDATE webhook_events SET created_at = now() - make_interval(days => $2) WHERE id = ANY($1::uuid[])`,
    [ids, days],
  );
}

async function count(db: Pool, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return rows[0].n;
}

async function eventIds(db: Pool, verificationId: string): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM webhook_events WHERE verification_id = $1 ORDER BY created_at, id`,
    [verificationId],
  );
  return rows.map((row) => row.id);
}

/** What the process's retention log lines add up to. */
function retentionLog(output: string[]): { lines: number; verifications: number; events: number } {
  const totals = { lines: 0, verifications: 0, events: 0 };
  for (const line of jsonLines(output)) {
    const match =
      /^retention: redacted (\d+) verification\(s\) past PII_RETENTION_DAYS=\d+, deleted (\d+) webhook event\(s\) past WEBHOOK_EVENT_RETENTION_DAYS=\d+ in \d+ ms$/.exec(
        String(line.msg),
      );
    if (!match) continue;
    totals.lines += 1;
    totals.verifications += Number(match[1]);
    totals.events += Number(match[2]);
  }
  return totals;
}

async function metrics(t: TestApp): Promise<{ redacted: number; deleted: number }> {
  const res = await t.http.get('/metrics');
  expect(res.status).toBe(200);
  return {
    redacted: metricValue(res.text, 'verifications_redacted_total', 'reason="retention"'),
    deleted: metricValue(res.text, 'webhook_events_deleted_total'),
  };
}

/** Starts the service with `env` and expects it to refuse: its exit code and everything it printed. */
function startRefused(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('retention (PII_RETENTION_DAYS, WEBHOOK_EVENT_RETENTION_DAYS)', () => {
  /** API and deliveries, with retention off: the data is made here, the passes run elsewhere. */
  let setup: TestApp;
  let ok: WebhookReceiver;
  let failing: WebhookReceiver;
  const workers: TestApp[] = [];

  beforeAll(async () => {
    [setup, ok, failing] = await Promise.all([
      startApp({ APP_ROLE: 'all', WEBHOOK_EVENT_RETENTION_DAYS: '0', WEBHOOK_RETRY_SCHEDULE: '100ms' }),
      WebhookReceiver.start(),
      WebhookReceiver.start(),
    ]);
    failing.respondWith({ status: 500 });
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.close()));
  });

  afterAll(async () => {
    await setup.close();
    await Promise.all([ok.close(), failing.close()]);
  });

  it('a worker redacts verifications past the window (decided_at, else updated_at) and deletes old finished events', async () => {
    const db = setup.db;
    const account = await createAccount(setup, { webhook_url: ok.url });
    const flaky = await createAccount(setup, { webhook_url: failing.url });
    const mine = [account.id, flaky.id];
    const applicant = (tag: string) => ({
      first_name: 'Ada',
      last_name: `Lovelace${tag}`,
      email: `${tag}@example.com`,
    });
    const make = (status: 'processing' | 'approved' | 'rejected', tag: string) =>
      createVerificationInStatus(setup, account.id, status, {
        external_user_id: `retention-${tag}`,
        applicant: applicant(tag),
        metadata: { tag },
      });

    const decided31 = await make('approved', 'decided31');
    const decided29 = await make('approved', 'decided29');
    const undecided31 = await make('processing', 'undecided31');
    const decidedRecentUpdatedOld = await make('rejected', 'decidedrecent');
    const decidedOldUpdatedRecent = await make('approved', 'decidedold');
    const fresh = await make('approved', 'fresh');
    const clientRedacted = await make('approved', 'clientredacted');
    const redactedByClient = await setup.http
      .post(`/api/v1/public/kyc/verifications/${clientRedacted.id}/redact`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(redactedByClient.status).toBe(200);
    const withOldEvents = await make('approved', 'oldevents');
    const withEvent89 = await createVerificationInStatus(setup, account.id, 'processing');
    const withFailedEvent = await createVerificationInStatus(setup, flaky.id, 'processing');
    const withPendingEvent = await createVerificationInStatus(setup, flaky.id, 'processing');

    await waitFor(
      () => count(db, `webhook_events WHERE account_id = ANY($1::uuid[]) AND delivery_status = 'pending'`, [mine]),
      (pending) => pending === 0,
      'every setup event to be delivered or to have failed',
    );

    await age(db, decided31.id, { updated: 31 });
    await age(db, decided29.id, { updated: 29 });
    await age(db, undecided31.id, { updated: 31 });
    await age(db, decidedRecentUpdatedOld.id, { updated: 31, decided: 5 });
    await age(db, decidedOldUpdatedRecent.id, { updated: 1, decided: 31 });
    await age(db, clientRedacted.id, { updated: 31 });
    const deletable = [...(await eventIds(db, withOldEvents.id)), ...(await eventIds(db, withFailedEvent.id))];
    expect(deletable).toHaveLength(3);
    const { rows: finished } = await db.query<{ delivery_status: string }>(
      `SELECT delivery_status FROM webhook_events WHERE id = ANY($1::uuid[]) ORDER BY delivery_status`,
      [deletable],
    );
    expect(finished.map((row) => row.delivery_status)).toEqual(['delivered', 'delivered', 'failed']);
    expect(await count(db, `webhook_attempts WHERE event_id = ANY($1::uuid[])`, [deletable])).toBe(2 + 2);
    await ageEvents(db, deletable, 91);
    const [event89] = await eventIds(db, withEvent89.id);
    await ageEvents(db, [event89], 89);
    // An event still retrying (its next attempt tomorrow) is never deleted, however old.
    const [pendingEvent] = await eventIds(db, withPendingEvent.id);
    await db.query(
      `UPDATE webhook_events SET delivery_status = 'pending', next_attempt_at = now() + interval '1 day',
              created_at = now() - interval '91 days' WHERE id = $1`,
      [pendingEvent],
    );

    // Rows other tests of this run left in the past are this pass's work too.
    const otherVerifications = await count(
      db,
      `verifications WHERE ${AGED_VERIFICATIONS} AND account_id <> ALL($1::uuid[])`,
      [mine],
    );
    const otherEvents = await count(db, `webhook_events WHERE ${AGED_EVENTS} AND account_id <> ALL($1::uuid[])`, [
      mine,
    ]);

    const worker = await startApp(RETENTION_WORKER);
    workers.push(worker);
    const redacted = [decided31, undecided31, decidedOldUpdatedRecent].map((v) => v.id);
    await waitFor(
      async () => ({
        log: retentionLog(worker.output),
        left: await count(db, `verifications WHERE id = ANY($1::uuid[]) AND redacted_at IS NULL`, [redacted]),
        events: await count(db, `webhook_events WHERE id = ANY($1::uuid[])`, [deletable]),
      }),
      ({ log, left, events }) =>
        left === 0 && events === 0 && log.verifications >= otherVerifications + 3 && log.events >= otherEvents + 3,
      'the retention pass and its log line',
      30_000,
    );

    expect(retentionLog(worker.output)).toMatchObject({
      verifications: otherVerifications + 3,
      events: otherEvents + 3,
    });
    expect(await metrics(worker)).toEqual({ redacted: otherVerifications + 3, deleted: otherEvents + 3 });

    const kept = [decided29, decidedRecentUpdatedOld, fresh, withOldEvents, withEvent89].map((v) => v.id);
    expect(await count(db, `verifications WHERE id = ANY($1::uuid[]) AND redacted_at IS NULL`, [kept])).toBe(
      kept.length,
    );
    const keptEvents = [decided29, decidedRecentUpdatedOld, fresh, withEvent89].map((v) => v.id);
    expect(await count(db, `webhook_events WHERE verification_id = ANY($1::uuid[])`, [keptEvents])).toBe(
      // Two status changes each, and one for withEvent89 (89 days old).
      3 * 2 + 1,
    );
    expect(await count(db, `webhook_events WHERE id = ANY($1::uuid[])`, [[event89, pendingEvent]])).toBe(2);
    expect(await count(db, `webhook_attempts WHERE event_id = ANY($1::uuid[])`, [deletable])).toBe(0);
    expect(await count(db, `webhook_attempts WHERE event_id = $1`, [pendingEvent])).toBe(2);

    // The client's own redaction stays the only one of its verification.
    const { rows: clientEvents } = await db.query<{ body: string }>(
      `SELECT body FROM webhook_events WHERE verification_id = $1 AND type = 'verification.redacted'`,
      [clientRedacted.id],
    );
    expect(clientEvents.map((row) => JSON.parse(row.body).data.reason)).toEqual(['client_request']);

    for (const id of redacted) {
      const { rows } = await db.query<{ id: string; body: string }>(
        `SELECT id, body FROM webhook_events WHERE verification_id = $1 AND type = 'verification.redacted'`,
        [id],
      );
      expect(rows).toHaveLength(1);
      const [delivery] = await ok.waitForCount(rows[0].id, 1);
      const payload = verifySignature(account.secret, delivery) as {
        type: string;
        data: { reason: string; verification: Record<string, unknown> };
      };
      expect(payload).toEqual(JSON.parse(rows[0].body));
      const detail = await setup.http
        .get(`/api/v1/public/kyc/verifications/${id}`)
        .set('authorization', `Bearer ${account.secret}`);
      const { status_history: _history, ...verification } = detail.body as Record<string, unknown>;
      expect(payload).toMatchObject({ type: 'verification.redacted', data: { reason: 'retention', verification } });
      expect(verification).toMatchObject({
        id,
        external_user_id: '[redacted]',
        applicant: null,
        document: null,
        metadata: {},
        updated_at: verification.redacted_at,
      });
      expect(verification.redacted_at).not.toBeNull();
    }
    const erased = ['decided31', 'undecided31', 'decidedold'];
    for (const tag of erased) {
      expect(await count(db, `verifications v WHERE v::text ILIKE $1`, [`%${tag}%`])).toBe(0);
      expect(await count(db, `webhook_events WHERE body ILIKE $1`, [`%${tag}%`])).toBe(0);
    }
    expect(await count(db, `verifications v WHERE v::text ILIKE '%decided29%'`)).toBe(1);
  });

  it('two workers running passes at once redact each verification once, and share the work', async () => {
    const db = setup.db;
    const account = await createAccount(setup, { webhook_url: null });
    await db.query(
      `INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at,
                                  submitted_at, decided_at, applicant, rejection_reasons)
       SELECT gen_random_uuid(), $1, 'bulk-' || n, 'approved', 3, now() - interval '60 days',
              now() - interval '40 days', now() - interval '41 days', now() - interval '40 days' - n * interval '1 second',
              jsonb_build_object('first_name', 'Bulk', 'last_name', 'Row' || n), '{}'
         FROM generate_series(1, 600) AS n`,
      [account.id],
    );
    const expected = await count(db, `verifications WHERE ${AGED_VERIFICATIONS}`);
    expect(expected).toBeGreaterThanOrEqual(600);

    // Each worker's first batch locks its verifications, then waits here to lock their events: once
    // both wait, each holds a batch of its own, so both do part of the work whatever the timing after.
    const gate = await db.connect();
    try {
      await gate.query('BEGIN');
      await gate.query('LOCK TABLE webhook_events IN EXCLUSIVE MODE');
      workers.push(...(await Promise.all([startApp(RETENTION_WORKER), startApp(RETENTION_WORKER)])));
      await waitFor(
        () =>
          count(
            db,
            `pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
               AND query LIKE '%FROM webhook_events%ORDER BY id FOR UPDATE%'`,
          ),
        (waiting) => waiting === 2,
        'both workers to hold a batch and wait for its events',
        30_000,
      );
    } finally {
      await gate.query('COMMIT');
      gate.release();
    }

    const logs = await waitFor(
      async () => workers.map((worker) => retentionLog(worker.output)),
      (all) => all[0].verifications + all[1].verifications >= expected,
      'both workers to log their passes',
      30_000,
    );
    expect(logs[0].verifications + logs[1].verifications).toBe(expected);
    expect(await count(db, `verifications WHERE account_id = $1 AND redacted_at IS NULL`, [account.id])).toBe(0);
    expect(
      await count(db, `webhook_events WHERE account_id = $1 AND type = 'verification.redacted'`, [account.id]),
    ).toBe(600);
    const { rows: twice } = await db.query(
      `SELECT verification_id FROM webhook_events WHERE type = 'verification.redacted'
        GROUP BY verification_id HAVING count(*) > 1`,
    );
    expect(twice).toEqual([]);
    expect(logs[0].verifications).toBeGreaterThan(0);
    expect(logs[1].verifications).toBeGreaterThan(0);
    const counted = await Promise.all(workers.map((worker) => metrics(worker)));
    expect(counted.map((m) => m.redacted)).toEqual(logs.map((log) => log.verifications));
  }, 180_000);

  it('a bad retention setting stops the start with one line naming the variable', async () => {
    const cases = [
      ['PII_RETENTION_DAYS', '-1'],
      ['PII_RETENTION_DAYS', '1.5'],
      ['PII_RETENTION_DAYS', 'abc'],
      ['WEBHOOK_EVENT_RETENTION_DAYS', '-3'],
    ];
    const results = await Promise.all(
      cases.map(([name, value]) => startRefused({ APP_ROLE: 'worker', [name]: value })),
    );
    results.forEach(({ code, output }, i) => {
      const [name, value] = cases[i];
      expect({ name, value, code, lines: output.trimEnd().split('\n') }).toEqual({
        name,
        value,
        code: 1,
        lines: [expect.stringMatching(new RegExp(`^Invalid configuration: ${name} must be an integer between `))],
      });
    });
  });

  it('by default no verification is redacted, and finished events are deleted after 90 days', async () => {
    const db = setup.db;
    const account = await createAccount(setup, { webhook_url: null });
    const v = await createVerificationInStatus(setup, account.id, 'approved', {
      applicant: { first_name: 'Grace', last_name: 'Hopper' },
    });
    await age(db, v.id, { updated: 3_000 });
    const [first, second] = await eventIds(db, v.id);
    await ageEvents(db, [first], 91);
    await ageEvents(db, [second], 89);

    const worker = await startApp({ APP_ROLE: 'worker', RETENTION_INTERVAL_MS: '200', LOG_LEVEL: 'info' });
    workers.push(worker);
    await waitFor(
      () => count(db, `webhook_events WHERE id = $1`, [first]),
      (left) => left === 0,
      'the default pass to delete the 91-day-old event',
    );
    await waitFor(
      async () => retentionLog(worker.output),
      (log) => log.events >= 1,
      'the log line of that pass',
    );
    // The pass redacts before it deletes: this one has finished, and left the verification alone.
    const { rows } = await db.query(`SELECT redacted_at, applicant FROM verifications WHERE id = $1`, [v.id]);
    expect(rows).toMatchObject([{ redacted_at: null, applicant: { first_name: 'Grace', last_name: 'Hopper' } }]);
    expect(await count(db, `webhook_events WHERE verification_id = $1`, [v.id])).toBe(1);
    expect(retentionLog(worker.output).verifications).toBe(0);
    expect((await metrics(worker)).redacted).toBe(0);
    expect(jsonLines(worker.output).map((line) => line.msg)).toContain(
      'retention: PII_RETENTION_DAYS=0: no redaction; delivered and failed webhook events deleted after 90 days (WEBHOOK_EVENT_RETENTION_DAYS)',
    );
  });
});
