import Redis from 'ioredis';
import { Client } from 'pg';
import { createDatabaseIfMissing, runMigrations } from 'src/database/migrate';

/** Drops the bench database if it exists (one whose name does not say bench is refused). */
export async function dropBenchDatabase(databaseUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  if (!/bench/.test(name)) throw new Error(`Refusing to drop database "${name}": its name does not say bench`);
  await onServer(databaseUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`),
  );
}

/**
 * A bench database's URL: `env[variable]` when set, else DATABASE_URL (or the contract's default)
 * with the database renamed to `name`. A name without "bench" is refused: bench databases are
 * dropped or truncated.
 */
export function benchDatabaseUrlFrom(variable: string, name: string, env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env[variable];
  const url = new URL(explicit ?? env.DATABASE_URL ?? 'postgres://postgres@localhost:5432/kyc');
  if (!explicit) url.pathname = `/${name}`;
  const chosen = decodeURIComponent(url.pathname.slice(1));
  if (!/bench/.test(chosen)) throw new Error(`Refusing to use database "${chosen}": its name does not say bench`);
  return url.toString();
}

/** Drops the bench database if it exists, creates it and applies every migration: an empty schema. */
export async function recreateBenchDatabase(databaseUrl: string): Promise<void> {
  await dropBenchDatabase(databaseUrl);
  await createDatabaseIfMissing(databaseUrl);
  await runMigrations(databaseUrl);
}

/** Deletes every Redis key under the given prefixes (and only those); returns how many. */
export async function cleanRedisPrefixes(redisUrl: string, prefixes: readonly string[]): Promise<number> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let deleted = 0;
  try {
    await redis.connect();
    for (const prefix of prefixes) {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length) deleted += await redis.del(...keys);
        cursor = next;
      } while (cursor !== '0');
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** Warns when PostgreSQL has fewer than `needed` connections to spare: pools would fail mid-run. */
export async function warnIfFewConnections(databaseUrl: string, needed: number, log: (line: string) => void) {
  const free = await onServer(databaseUrl, async (client) => {
    const { rows } = await client.query<{ free: number }>(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
              - (SELECT count(*) FROM pg_stat_activity)::int AS free`,
    );
    return rows[0]?.free ?? 0;
  });
  if (free < needed)
    log(`WARNING: PostgreSQL has ${free} connections to spare and this bench may open ${needed}: expect failures`);
}

/** Work on the server's maintenance database. */
export async function onServer<T>(databaseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
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
