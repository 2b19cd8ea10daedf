import type { PoolClient } from 'pg';
import type { Response } from 'supertest';
import { CreatedAccount, createAccount, createVerification } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';

const INTERNAL = '/api/v1/internal/kyc/verifications';
const LOCK_HELD_MS = 8_000;

/** Backends of this database other than `except` that wait on a lock, as pg_stat_activity shows them. */
async function waitingOnLocks(t: TestApp, except: number): Promise<number> {
  const { rows } = await t.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> $1`,
    [except],
  );
  return Number(rows[0].n);
}

describe('a row lock held by another session: a 5xx means "not committed"', () => {
  let t: TestApp;
  let account: CreatedAccount;

  beforeAll(async () => {
    t = await startApp();
    account = await createAccount(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const move = (id: string): Promise<Response> =>
    t.http
      .post(`${INTERNAL}/${id}/transitions`)
      .set('authorization', `Bearer ${t.internalToken}`)
      .send({ status: 'processing' })
      .then((res) => res);

  it('answers each change waiting on the lock only after PostgreSQL gave it up, commits none later, and serves other rows', async () => {
    const locked = await createVerification(t, account.id);
    const others = await Promise.all(Array.from({ length: 30 }, () => createVerification(t, account.id)));
    const locker: PoolClient = await t.db.connect();
    let released = false;
    try {
      const { rows } = await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM verifications WHERE id = $1 FOR UPDATE', [locked.id]);
      const lockedAt = Date.now();

      const blocked = Promise.all(Array.from({ length: 10 }, () => move(locked.id)));
      const otherAnswers = await Promise.all(others.map((other) => move(other.id)));
      const answers = await blocked;
      const answeredWithin = Date.now() - lockedAt;
      // Answered while the lock is still held: no session may still be waiting for it on our behalf.
      const waitingAfterAnswers = await waitingOnLocks(t, rows[0].pid);
      expect(answeredWithin).toBeLessThan(LOCK_HELD_MS);

      await new Promise((resolve) => setTimeout(resolve, Math.max(0, LOCK_HELD_MS - (Date.now() - lockedAt))));
      await locker.query('ROLLBACK');
      released = true;
      // Anything still queued behind the lock would commit now; give it the time to.
      await new Promise((resolve) => setTimeout(resolve, 2_000));

      const row = await t.db.query<{ version: number; status: string }>(
        'SELECT version, status FROM verifications WHERE id = $1',
        [locked.id],
      );
      const history = await t.db.query('SELECT 1 FROM verification_status_history WHERE verification_id = $1', [
        locked.id,
      ]);
      const events = await t.db.query('SELECT 1 FROM webhook_events WHERE verification_id = $1', [locked.id]);
      const ok = answers.filter((res) => res.status === 200).length;
      expect({
        statuses: [...new Set(answers.map((res) => res.status))],
        codes: [...new Set(answers.map((res) => (res.body as { error?: { code?: string } }).error?.code))],
        committed: row.rows[0].version - 1,
        history: history.rowCount,
        events: events.rowCount,
        waitingAfterAnswers,
        otherStatuses: [...new Set(otherAnswers.map((res) => res.status))],
      }).toEqual({
        statuses: [503],
        codes: ['service_unavailable'],
        committed: ok,
        history: 1 + ok,
        events: ok,
        waitingAfterAnswers: 0,
        otherStatuses: [200],
      });
      for (const res of answers) expect(res.headers['retry-after']).toBeDefined();
    } finally {
      if (!released) await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
    }
  });
});
