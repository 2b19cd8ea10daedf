import Redis from 'ioredis';
import { Client } from 'pg';
import { createDatabaseIfMissing, runMigrations } from 'src/database/migration-runner';
import type { Lab } from './processes';
import { REDIS_URL } from './service-env';

/** The database's name; one without "bench" is refused: bench databases are dropped. */
function benchName(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  if (!/bench/.test(name)) throw new Error(`Refusing to use database "${name}": its name does not say bench`);
  return name;
}

/** Drops the bench database if it exists. */
export async function dropBenchDatabase(databaseUrl: string): Promise<void> {
  const name = benchName(databaseUrl).replace(/"/g, '""');
  await onServer(databaseUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** A bench database's URL: `$variable` when set, else DATABASE_URL (or the contract's default) renamed to `name`. */
export function benchDatabaseUrlFrom(variable: string, name: string): string {
  const explicit = process.env[variable];
  const url = new URL(explicit ?? process.env.DATABASE_URL ?? 'postgres://postgres@localhost:5432/kyc');
  if (!explicit) url.pathname = `/${name}`;
  benchName(url.toString());
  return url.toString();
}

/** Drops the bench database if it exists, creates it and applies every migration: an empty schema. */
export async function recreateBenchDatabase(databaseUrl: string): Promise<void> {
  await dropBenchDatabase(databaseUrl);
  await createDatabaseIfMissing(databaseUrl);
  await runMigrations(databaseUrl);
}

/**
 * A run's own bench database (`env[variable]`, else `name`: see benchDatabaseUrlFrom), made anew
 * from the migrations, and its Redis `prefixes`, cleaned now and at the end of the run.
 */
export async function freshBench(lab: Lab, variable: string, name: string, prefixes: string[]): Promise<string> {
  const databaseUrl = benchDatabaseUrlFrom(variable, name);
  await recreateBenchDatabase(databaseUrl);
  await cleanRedisPrefixes(REDIS_URL, prefixes);
  lab.defer(() => cleanRedisPrefixes(REDIS_URL, prefixes));
  return databaseUrl;
}

/** Deletes every Redis key under the given prefixes (and only those). */
export async function cleanRedisPrefixes(redisUrl: string, prefixes: readonly string[]): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    for (const prefix of prefixes) {
      for (let cursor = '0', keys: string[] = []; ;) {
        [cursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        if (keys.length) await redis.del(...keys);
        if (cursor === '0') break;
      }
    }
  } finally {
    redis.disconnect();
  }
}

/** Warns when PostgreSQL has fewer than `needed` connections to spare: pools would fail mid-run. */
export async function warnIfFewConnections(databaseUrl: string, needed: number, log: (line: string) => void) {
  const { rows } = await onServer(databaseUrl, (client) =>
    client.query<{ free: number }>(
      `SELECT current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
              - (SELECT count(*) FROM pg_stat_activity)::int AS free`,
    ),
  );
  const free = rows[0]?.free ?? 0;
  if (free < needed)
    log(`WARNING: PostgreSQL has ${free} connections to spare and this bench may open ${needed}: expect failures`);
}

/** Work on the server's maintenance database. */
export async function onServer<T>(databaseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: Object.assign(new URL(databaseUrl), { pathname: '/postgres' }).href });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
