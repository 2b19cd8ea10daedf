import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { migrationDataSourceOptions } from 'src/database/migration-options';
import { runMigrations } from 'src/database/migration-runner';
import { LAST_OF_PREVIOUS_RELEASE, MIGRATIONS } from '../../migrations';
import { log } from '../harness/report';
import { renderJson } from '../harness/seed';

/** `npm run cli -- render-json`'s default --batch-size. */
const RENDER_JSON_BATCH = 1_000;

/**
 * What reads and status changes need of the previous release's tables, each in a transaction rolled
 * back (nothing changes): a read of a verification and of an account's delivery log, and the locks
 * a status change takes (the verification's row, a history row, an outbox event, an attempt).
 */
function probes(ids: { verification: string; account: string; event: string }) {
  const v = `'${ids.verification}'`;
  const a = `'${ids.account}'`;
  return {
    'verification read': `SELECT * FROM verifications WHERE id = ${v}`,
    'verification change': `UPDATE verifications SET updated_at = updated_at WHERE id = ${v}`,
    'history insert': `INSERT INTO verification_status_history (verification_id, version, status, at)
                         VALUES (${v}, 1000000, 'pending', now())`,
    'delivery log read': `SELECT id FROM webhook_events WHERE account_id = ${a} ORDER BY created_at DESC, id DESC LIMIT 20`,
    'outbox insert': `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status)
                        VALUES (gen_random_uuid(), ${a}, ${v}, 'probe', '{}', now(), 'delivered')`,
    'attempt insert': `INSERT INTO webhook_attempts (event_id, number, at, duration_ms) VALUES ('${ids.event}', 1000000, now(), 1)`,
  };
}

/** Each probe on its own connection, every 50 ms; `stop()` returns each one's longest wait (ms). */
async function startProbes(databaseUrl: string, statements: Record<string, string>) {
  let running = true;
  const loops = Object.entries(statements).map(async ([name, sql]) => {
    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    let longest = 0;
    try {
      while (running) {
        const t0 = performance.now();
        await client.query('BEGIN');
        await client.query(sql);
        await client.query('ROLLBACK');
        longest = Math.max(longest, performance.now() - t0);
        await sleep(50);
      }
    } finally {
      await client.end();
    }
    return [name, longest] as const;
  });
  return async (): Promise<Record<string, number>> => {
    running = false;
    return Object.fromEntries(await Promise.all(loops));
  };
}

export type MigrationFigures = { name: string; seconds: number; waits: Record<string, number> };

/**
 * The release's migrations on a seeded database: undone (newest first), then applied one at a time
 * as a deployment applies them, while probes run the reads and status changes of the release before
 * beside them; then the stored JSON the fill migration used to write, rendered by the service's
 * own backfill (what `npm run cli -- render-json` runs), with the probes beside it too. Returns
 * each step's seconds and each probe's longest wait.
 */
export async function checkMigrations(databaseUrl: string): Promise<MigrationFigures[]> {
  const first = MIGRATIONS.findIndex((m) => m.name === LAST_OF_PREVIOUS_RELEASE) + 1;
  const release = MIGRATIONS.slice(first);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const { rows } = await db.query<{ verification: string; account: string; event: string }>(
    `SELECT v.id AS verification, v.account_id AS account, e.id AS event
       FROM verifications v JOIN webhook_events e ON e.verification_id = v.id ORDER BY v.created_at DESC LIMIT 1`,
  );
  await db.end();
  const statements = probes(rows[0] as { verification: string; account: string; event: string });
  const all = new DataSource(migrationDataSourceOptions(databaseUrl));
  await all.initialize();
  // Without a transaction of TypeORM's: the index migrations' down() drops CONCURRENTLY.
  for (let i = 0; i < release.length; i++) await all.undoLastMigration({ transaction: 'none' });
  await all.destroy();
  log(`migrations: ${release.length} of this release undone; applying them one at a time beside the probes`);
  const figures: MigrationFigures[] = [];
  const step = async (name: string, work: () => Promise<unknown>): Promise<void> => {
    const stop = await startProbes(databaseUrl, statements);
    await sleep(200);
    const t0 = performance.now();
    await work();
    const seconds = (performance.now() - t0) / 1000;
    await sleep(200);
    figures.push({ name, seconds, waits: await stop() });
    log(`migrations: ${name} in ${seconds.toFixed(1)} s`);
  };
  for (let i = 0; i < release.length; i++) {
    const upTo = MIGRATIONS.slice(0, first + i + 1);
    await step(release[i]?.name ?? '', () => runMigrations(databaseUrl, upTo, log));
  }
  await step(`render-json (the stored JSON, the CLI's batches of ${RENDER_JSON_BATCH})`, () =>
    renderJson(databaseUrl, RENDER_JSON_BATCH),
  );
  return figures;
}
