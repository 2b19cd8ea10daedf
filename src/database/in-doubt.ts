import { Client } from 'pg';
import { isDatabaseUnavailable } from 'src/database/dependency-errors';
import { PRIMARY_CHECK_SQL, assertPrimary, type Backend, type PrimaryCheck } from 'src/database/primary-only';

/** A query on the primary, for a probe. */
export type ProbeQuery = (sql: string, params: unknown[]) => Promise<unknown[]>;

/**
 * Whether a write's effect is on the primary: the service made the write's ids (a verification, an
 * event, a secret), so the owner of the table can look for one. Built by that table's repository.
 */
export type CommitProbe = (query: ProbeQuery) => Promise<boolean>;

export type CommitOutcome = 'committed' | 'not_committed' | 'unknown';

/** Refusals PostgreSQL reports for the statement itself: it was rolled back, the outcome is known. */
const ROLLED_BACK = /^(?:55P03|57014|25006|KYC_NOT_PRIMARY|53300|53400|40001|40P01)$/;

function codeOf(error: unknown): unknown {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  return e?.code ?? e?.driverError?.code;
}

/**
 * True when a COMMIT (or an autocommit write) failed in a way that says nothing of its outcome: the
 * connection was lost, the server ended the session, or the client stopped waiting for the answer.
 */
export function isOutcomeUnknown(error: unknown): boolean {
  if (!isDatabaseUnavailable(error)) return false;
  const code = codeOf(error);
  return !(typeof code === 'string' && ROLLED_BACK.test(code));
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The session whose answer was lost was still there when the time ran out. */
class BackendLingers extends Error {}

/**
 * Finds out, on a fresh connection to the primary, whether a write whose answer was lost committed.
 * If the primary is the same server the write went to, the write's session is ended first and its
 * end awaited: a commit still flushing WAL, or waiting for a synchronous standby, is then settled one
 * way or the other (a wait for a standby ends committed locally) and the probe cannot run before it.
 * After a failover the write's session is on another server, and the new primary has the change or
 * never will. 'unknown' only when no primary answered within `budgetMs`.
 */
export async function settleCommit(
  primaryUrl: string,
  backend: Backend | undefined,
  probe: CommitProbe,
  budgetMs: number,
): Promise<CommitOutcome> {
  const deadline = Date.now() + budgetMs;
  while (Date.now() < deadline) {
    const wait = Math.max(100, Math.min(2_000, deadline - Date.now()));
    const client = new Client({ connectionString: primaryUrl, connectionTimeoutMillis: wait, query_timeout: wait });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const [check] = (await client.query<PrimaryCheck>(PRIMARY_CHECK_SQL)).rows;
      assertPrimary(check);
      if (backend && backend.postmasterStart === check.postmaster_start) await endSession(client, backend, deadline);
      const committed = await probe(async (sql, params) => (await client.query(sql, params)).rows);
      return committed ? 'committed' : 'not_committed';
    } catch (error) {
      if (!isDatabaseUnavailable(error) && !(error instanceof BackendLingers)) throw error;
      await sleep(Math.min(250, deadline - Date.now()));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return 'unknown';
}

/** The session, found by PID and start time (a PID alone may be another session's by now). */
const SESSION = 'FROM pg_stat_activity WHERE pid = $1 AND backend_start::text = $2';

async function endSession(client: Client, backend: Backend, deadline: number): Promise<void> {
  const params = [backend.pid, backend.backendStart];
  await client.query(`SELECT pg_terminate_backend(pid) ${SESSION}`, params);
  while ((await client.query(`SELECT 1 ${SESSION}`, params)).rowCount) {
    if (Date.now() >= deadline) throw new BackendLingers();
    await sleep(20);
  }
}
