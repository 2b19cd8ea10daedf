import Redis from 'ioredis';
import { Client } from 'pg';
import { testDatabaseServerUrl } from '../../scripts/test-servers';

/** Drops this run's database and its queue keys; never touches anything without "test" in its name. */
export default async function globalTeardown(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL ?? '';
  const url = new URL(databaseUrl);
  const dbName = decodeURIComponent(url.pathname.slice(1));
  if (process.env.KEEP_TEST_DB !== '1' && /test/.test(dbName)) {
    const client = new Client({ connectionString: testDatabaseServerUrl() });
    await client.connect();
    await client.query(`DROP DATABASE IF EXISTS "${dbName.replace(/"/g, '""')}" WITH (FORCE)`);
    await client.end();
  }
  const prefix = process.env.QUEUE_PREFIX ?? '';
  if (/test/.test(prefix)) {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    try {
      await redis.connect();
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    } catch {
      // Redis down at teardown: nothing of ours can be left behind that outlives it.
    } finally {
      redis.disconnect();
    }
  }
}
