import { Client } from 'pg';
import { testDatabaseServerUrl } from '../../scripts/test-servers';
import { clearQueueKeys } from './queue-keys';

/** Drops this run's database and its queue keys; never touches anything without "test" in its name. */
export default async function globalTeardown(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? '';
  const url = new URL(databaseUrl);
  const dbName = decodeURIComponent(url.pathname.slice(1));
  if (process.env.KEEP_TEST_DB !== '1' && /test/.test(dbName)) {
    const client = new Client({ connectionString: testDatabaseServerUrl() });
    await client.connect();
    // The run's database and its workers' copies (test/setup/worker-env.ts).
    const { rows } = await client.query<{ name: string }>(
      `SELECT datname AS name FROM pg_database WHERE datname = $1 OR datname ~ ('^' || $1 || '_w[0-9]+$')`,
      [dbName],
    );
    for (const { name } of rows)
      await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
    await client.end();
  }
  const prefix = process.env.QUEUE_PREFIX ?? '';
  // Redis down at teardown: nothing of ours can be left behind that outlives it.
  if (/test/.test(prefix)) await clearQueueKeys(prefix).catch(() => undefined);
}
