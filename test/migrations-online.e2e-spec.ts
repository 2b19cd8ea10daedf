import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions, type MigrationInterface, type QueryRunner } from 'typeorm';
import { migrationDataSourceOptions } from 'src/database/migration-options';
import { runMigrations } from 'src/database/migration-runner';
import { LAST_OF_PREVIOUS_RELEASE, MIGRATIONS } from '../migrations';
import { ownDatabase } from './helpers/own-database';
import { startLonePrimary } from './helpers/postgres-cluster';
import { waitFor } from './helpers/poll';

/**
 * This release's migrations run online on a database that is serving (the contract's Scale rule):
 * the SQL each one runs passes Squawk's checks for statements that stop reads or writes of a large
 * table (.squawk.toml says which of its rules are left out, and why), and a migration that cannot
 * get a lock that reads would queue behind gives it up and is run again, instead of stopping the
 * service for as long as the lock is held. Each test on a database of its own at the previous release.
 */

const RELEASE_FROM = MIGRATIONS.findIndex((migration) => migration.name === LAST_OF_PREVIOUS_RELEASE) + 1;
const PREVIOUS = MIGRATIONS.slice(0, RELEASE_FROM);
const RELEASE = MIGRATIONS.slice(RELEASE_FROM);

type Captured = { name: string; transaction: boolean; statements: string[] };

/** Applies each migration for real, in order, and returns the SQL it ran (a recording view of the query runner). */
async function applyAndCapture(url: string): Promise<Captured[]> {
  const dataSource = new DataSource({ ...migrationDataSourceOptions(url), migrations: [] } as DataSourceOptions);
  await dataSource.initialize();
  const runner = dataSource.createQueryRunner();
  const captured: Captured[] = [];
  try {
    for (const Migration of RELEASE) {
      const migration = new Migration() as MigrationInterface & { name: string };
      const statements: string[] = [];
      const recording = new Proxy(runner, {
        get(target, property) {
          if (property === 'query') {
            return (sql: string, parameters?: unknown[]) => {
              statements.push(sql.trim());
              return target.query(sql, parameters);
            };
          }
          const value: unknown = Reflect.get(target, property);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      }) as QueryRunner;
      const transaction = migration.transaction !== false;
      if (transaction) await runner.startTransaction();
      await migration.up(recording);
      if (transaction) await runner.commitTransaction();
      captured.push({ name: migration.name, transaction, statements });
    }
  } finally {
    await runner.release();
    await dataSource.destroy();
  }
  return captured;
}

type SquawkViolation = { file: string; line: number; rule_name: string; message: string };

/** Squawk (`squawk-cli`) on the files, with the repository's .squawk.toml, as JSON. */
async function squawk(files: string[], inTransaction: boolean): Promise<SquawkViolation[]> {
  if (files.length === 0) return [];
  const bin = require.resolve('squawk-cli/js/bin/squawk');
  const args = [bin, '--config', join(__dirname, '..', '.squawk.toml'), '--pg-version', '15.0', '--reporter', 'json'];
  if (inTransaction) args.push('--assume-in-transaction');
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [...args, ...files]);
    return JSON.parse(stdout || '[]') as SquawkViolation[];
  } catch (error) {
    // Squawk exits 1 when it found something, with the findings on stdout.
    const { stdout } = error as { stdout?: string };
    if (!stdout) throw error;
    return JSON.parse(stdout) as SquawkViolation[];
  }
}

describe("this release's migrations on a database that is serving", () => {
  it('run only SQL that Squawk finds safe on a large, busy table', async () => {
    const database = await ownDatabase('online_lint', false);
    const dir = mkdtempSync(join(tmpdir(), 'kyc-migrations-'));
    try {
      await runMigrations(database.url, PREVIOUS);
      const captured = await applyAndCapture(database.url);
      // Every migration of the release that does something was seen doing it (an empty capture passes any lint).
      expect(captured.filter((migration) => migration.statements.length === 0).map((m) => m.name)).toEqual([
        'VerificationResponseJsonFill1763820000001',
      ]);
      const files = captured.map((migration) => {
        const file = join(dir, `${migration.name}.sql`);
        writeFileSync(file, migration.statements.map((sql) => `${sql};\n`).join('\n'));
        return { file, transaction: migration.transaction };
      });
      const found: SquawkViolation[] = [];
      for (const inTransaction of [true, false]) {
        const group = files.filter((f) => f.transaction === inTransaction).map((f) => f.file);
        found.push(...(await squawk(group, inTransaction)));
      }
      expect(found.map((v) => `${v.file.slice(dir.length + 1)}:${v.line} ${v.rule_name}: ${v.message}`)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await database.drop();
    }
  });

  it('give up a lock that reads queue behind, and apply once it is free', async () => {
    const database = await ownDatabase('online_locks', false);
    const blocker = new Client({ connectionString: database.url });
    const reader = new Client({ connectionString: database.url });
    try {
      await runMigrations(database.url, PREVIOUS);
      await Promise.all([blocker.connect(), reader.connect()]);
      // A long transaction that read the delivery log (a report, a backup): it holds the table's weakest lock.
      await blocker.query('BEGIN');
      await blocker.query('SELECT count(*) FROM webhook_events');
      const lines: string[] = [];
      const migrating = runMigrations(database.url, undefined, (line) => lines.push(line));
      // The release's first change of webhook_events waits for the blocker's lock...
      await waitFor(
        async () => {
          const { rows } = await reader.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity
             WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'ALTER TABLE webhook_events%'`,
          );
          return rows[0].n;
        },
        (n) => n > 0,
        'a migration waiting for a lock on webhook_events',
      );
      // ...and a read that comes after it waits at most the migration's lock_timeout: it is answered
      // while the blocker still holds its lock (the blocker ends when the read is answered, or after 5 s
      // at most, ten times the migration's lock_timeout, as a guard against a hang).
      let blockerEnded = false;
      let guard: NodeJS.Timeout | undefined;
      const read = reader.query('SELECT count(*) FROM webhook_events').then(() => !blockerEnded);
      const answeredFirst = await Promise.race([
        read,
        new Promise<false>((resolve) => (guard = setTimeout(() => resolve(false), 5_000))),
      ]);
      clearTimeout(guard);
      blockerEnded = true;
      await blocker.query('COMMIT');
      expect(answeredFirst).toBe(true);
      // The migration gave the lock up, said so, and applied the whole release once the lock was free.
      expect(await migrating).toEqual(RELEASE.map((migration) => migration.name));
      expect(lines.some((line) => /lock/.test(line) && /again/.test(line))).toBe(true);
      await read;
    } finally {
      await Promise.all([blocker.end(), reader.end()]);
      await database.drop();
    }
  });

  it('have autovacuum give a table up rather than wait for it to end', async () => {
    // A server of the test's own: the machine's runs without autovacuum.
    const cluster = await startLonePrimary();
    try {
      const admin = new Client({ connectionString: cluster.primary.url('postgres') });
      await admin.connect();
      await admin.query('CREATE DATABASE kyc_autovacuum');
      await admin.query(`ALTER SYSTEM SET autovacuum_naptime = '5s'`);
      await admin.query('SELECT pg_reload_conf()');
      await admin.end();
      const url = cluster.primary.url('kyc_autovacuum');
      await runMigrations(url, PREVIOUS);
      const db = new Client({ connectionString: url });
      await db.connect();
      // Enough events for a vacuum slowed to one page per 100 ms to hold webhook_events for a minute
      // (no account rows: foreign keys are not checked in this session).
      await db.query(`SET session_replication_role = replica`);
      await db.query(
        `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status)
         SELECT gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'verification.status_changed',
                (SELECT string_agg(md5(random()::text || i), '') FROM generate_series(1, 30) i WHERE g > 0),
                now(), 'delivered'
           FROM generate_series(1, 3000) g`,
      );
      await db.query(
        `ALTER TABLE webhook_events SET (autovacuum_vacuum_insert_threshold = 1, autovacuum_vacuum_insert_scale_factor = 0,
           autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1)`,
      );
      await waitFor(
        async () => {
          const { rows } = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
             WHERE a.backend_type = 'autovacuum worker' AND l.relation = 'webhook_events'::regclass`,
          );
          return rows[0].n;
        },
        (n) => n > 0,
        'autovacuum on webhook_events',
        60_000,
      );
      await db.end();
      const mark = cluster.primary.logMark();
      const lines: string[] = [];
      expect(await runMigrations(url, undefined, (line) => lines.push(line))).toEqual(
        RELEASE.map((migration) => migration.name),
      );
      // The migration gave its lock up, the runner asked for the vacuum's own lock mode, and
      // PostgreSQL cancelled the vacuum (which a 500 ms lock_timeout alone never makes it do).
      expect(lines.some((line) => line.includes('asking autovacuum to give up webhook_events'))).toBe(true);
      expect(cluster.primary.logSince(mark)).toContain('canceling autovacuum task');
    } finally {
      cluster.close();
    }
  }, 180_000);
});
