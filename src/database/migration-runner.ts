import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { migrationDataSourceOptions } from './migration-options';

/** Creates the database named in the URL when it does not exist yet. */
export async function createDatabaseIfMissing(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    }
  } catch (error) {
    // Another process may have created it between the check and the create.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
}

export type MigrationList = NonNullable<DataSourceOptions['migrations']>;

/** PostgreSQL's lock_not_available: a statement gave up waiting for a lock after its lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';
/**
 * A migration that waits for a lock the service's reads or writes would queue behind sets a short
 * lock_timeout (CONTRIBUTING, writing a migration): when it gives up, the run is made again after
 * this pause, this many times at most (about six minutes), then fails saying why.
 */
const LOCK_RETRY_PAUSE_MS = 2_000;
const LOCK_RETRIES = 150;

/**
 * Autovacuum holds its table's SHARE UPDATE EXCLUSIVE lock for as long as it runs (minutes on a large
 * table) and gives it up to a lock request only once that request has waited deadlock_timeout (1 s by
 * default), which a migration's 500 ms never reaches: without help, a migration would give up again
 * and again until the vacuum ended. So after a lock was given up, the runner asks, on each table an
 * autovacuum worker holds in this database, for that same lock mode, which no read or write queues
 * behind; PostgreSQL answers by cancelling the vacuum, and autovacuum comes back to the table later.
 * One that prevents wraparound is not cancelled: the request gives up after AUTOVACUUM_WAIT_MS. No
 * privilege is needed beyond the migrations' own on the table.
 */
const AUTOVACUUM_WAIT_MS = 5_000;

/** Returns how many tables autovacuum gave up. */
async function cancelAutovacuums(databaseUrl: string, log: (line: string) => void): Promise<number> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT DISTINCT c.oid::regclass::text AS name
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid JOIN pg_class c ON c.oid = l.relation
        WHERE a.backend_type = 'autovacuum worker' AND l.locktype = 'relation' AND l.granted
          AND l.mode = 'ShareUpdateExclusiveLock' AND c.relkind IN ('r', 'p')
          AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'pg_toast'::regnamespace)
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    let freed = 0;
    for (const { name } of rows) {
      log(`migrations: asking autovacuum to give up ${name}`);
      await client.query('BEGIN');
      try {
        await client.query(`SET LOCAL lock_timeout = ${AUTOVACUUM_WAIT_MS}`);
        await client.query(`LOCK TABLE ${name} IN SHARE UPDATE EXCLUSIVE MODE`);
        freed += 1;
      } catch (error) {
        log(`migrations: autovacuum kept ${name} (${(error as Error).message})`);
      } finally {
        await client.query('ROLLBACK');
      }
    }
    return freed;
  } finally {
    await client.end();
  }
}

function gaveUpALock(error: unknown): boolean {
  const { code, driverError } = error as { code?: unknown; driverError?: { code?: unknown } };
  return code === LOCK_NOT_AVAILABLE || driverError?.code === LOCK_NOT_AVAILABLE;
}

/** The names in the migrations table, oldest first (none on a new database). */
async function appliedNames(dataSource: DataSource): Promise<string[]> {
  const [{ table }] = (await dataSource.query(`SELECT to_regclass('migrations') AS table`)) as {
    table: string | null;
  }[];
  if (table === null) return [];
  const rows = (await dataSource.query('SELECT name FROM migrations ORDER BY id')) as { name: string }[];
  return rows.map((row) => row.name);
}

/** One run, under the runners' advisory lock: tells `before` what was applied, then returns what is. */
async function runOnce(options: DataSourceOptions, before: (names: string[]) => void): Promise<string[]> {
  const dataSource = new DataSource(options);
  await dataSource.initialize();
  const lock = dataSource.createQueryRunner();
  try {
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock(7277001)');
    before(await appliedNames(dataSource));
    await dataSource.runMigrations({ transaction: 'each' });
    return await appliedNames(dataSource);
  } finally {
    await lock.release();
    await dataSource.destroy();
  }
}

/**
 * Applies pending migrations (all of migrations/, or the first ones, for tests that build an older
 * schema) and returns the names it applied; idempotent, and serialised across concurrent runners. A
 * run whose migration gave up a lock is made again (each migration is safe to run again: one in a
 * transaction was rolled back, one outside it is written to be rerun), each time said on `log`.
 */
export async function runMigrations(
  databaseUrl: string,
  migrations?: MigrationList,
  log: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<string[]> {
  const options = {
    ...migrationDataSourceOptions(databaseUrl),
    ...(migrations ? { migrations } : {}),
  } as DataSourceOptions;
  let first: string[] | undefined;
  for (let retry = 1; ; retry++) {
    try {
      const after = await runOnce(options, (names) => (first ??= names));
      return after.filter((name) => !first?.includes(name));
    } catch (error) {
      if (!gaveUpALock(error)) throw error;
      const message = error instanceof Error ? error.message : String(error);
      if (retry > LOCK_RETRIES) {
        throw new Error(`gave up waiting for a lock ${retry} times, each after its lock_timeout (${message})`, {
          cause: error,
        });
      }
      log(
        `migrations: a statement gave up waiting for a lock (${message}); running them again ` +
          `(${retry} of ${LOCK_RETRIES})`,
      );
      // Straight away once autovacuum gave a table up, before it comes back to it (autovacuum_naptime).
      if ((await cancelAutovacuums(databaseUrl, log)) > 0) continue;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_PAUSE_MS));
    }
  }
}
