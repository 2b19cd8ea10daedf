import { Client } from 'pg';
import { runMigrations } from 'src/database/migration-runner';

/** Runs statements on the server's maintenance database, beside the one in the URL. */
async function withServer<T>(databaseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Runs one statement on the server's maintenance database, beside the one in the URL. */
export async function onServer(databaseUrl: string, sql: string): Promise<void> {
  await withServer(databaseUrl, (client) => client.query(sql));
}

/**
 * Drops a database once the sessions still on it are gone (5 s at most, then by force): pg's
 * `pool.end()` resolves before its sessions have ended, and a forced drop ends them with a FATAL
 * error that the test process, whose pool has no listener left, reports as unhandled.
 */
async function dropDatabase(databaseUrl: string, name: string): Promise<void> {
  await withServer(databaseUrl, async (client) => {
    for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
      const { rows } = await client.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1',
        [name],
      );
      if (rows[0].n === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
}

/**
 * A database of the spec's own beside the worker's (`<its database>_<suffix>`), migrated, for a spec that
 * needs what no other spec has written (the worker's database is shared by every spec file it runs).
 */
export async function ownDatabase(suffix: string, migrated = true): Promise<{ url: string; drop(): Promise<void> }> {
  const url = `${process.env.DATABASE_URL}_${suffix}`;
  const name = new URL(url).pathname.slice(1);
  if (!/test/.test(name)) throw new Error(`Refusing to use database ${name}: its name does not say test`);
  await onServer(url, `CREATE DATABASE "${name}"`);
  if (migrated) await runMigrations(url);
  return { url, drop: () => dropDatabase(url, name) };
}
