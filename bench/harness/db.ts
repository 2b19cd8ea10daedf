import { cpus } from 'node:os';
import Redis from 'ioredis';
import { Client } from 'pg';
import { SecretKeyring, hashSecret } from 'src/accounts/secret-crypto';
import { createDatabaseIfMissing, runMigrations } from 'src/database/migrate';
import { BENCH_SECRET_ENCRYPTION_KEY, benchSecret } from './service-env';

/** Drops the bench database if it exists (one whose name does not say bench is refused). */
export async function dropBenchDatabase(databaseUrl: string): Promise<void> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  if (!/bench/.test(name)) throw new Error(`Refusing to drop database "${name}": its name does not say bench`);
  await onServer(databaseUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`),
  );
}

/** A connection tuned for bulk seeding. */
async function seedingClient(databaseUrl: string): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`SET maintenance_work_mem = '512MB'; SET work_mem = '256MB'; SET synchronous_commit = off`);
  return client;
}

/** Runs the statements two at a time (the bench machine has two cores). */
export async function inParallel(databaseUrl: string, statements: string[]): Promise<void> {
  const clients = await Promise.all([seedingClient(databaseUrl), seedingClient(databaseUrl)]);
  const queue = [...statements];
  try {
    await Promise.all(
      clients.map(async (client) => {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) await client.query(next);
      }),
    );
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
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

/** CPUs, Node and PostgreSQL versions, for the line above a benchmark's table. */
export async function describeMachine(databaseUrl: string): Promise<string> {
  const version = await onServer(databaseUrl, async (client) => {
    const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
    return rows[0]?.server_version;
  });
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, Node ${process.version}, PostgreSQL ${version}`;
}

/** Work on the server's maintenance database. */
async function onServer<T>(databaseUrl: string, work: (client: Client) => Promise<T>): Promise<T> {
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

/** A SQL text[] literal of `values`. */
export function textArray(values: readonly string[]): string {
  return `ARRAY[${values.map((value) => `'${value.replace(/'/g, "''")}'`).join(',')}]::text[]`;
}

/** Drops the secondary indexes of `tables` for a bulk insert; returns their definitions, to rebuild. */
async function dropSecondaryIndexes(client: Client, tables: string[]): Promise<string[]> {
  const defs = await client.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
      WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [tables],
  );
  for (const { name } of defs.rows) await client.query(`DROP INDEX "${name}"`);
  return defs.rows.map((row) => row.def);
}

/** Account index → its deterministic id, in SQL. */
export const accountIdSql = (index: string): string => `md5('kyc-bench-account-' || ${index})::uuid`;

/**
 * Seeds a freshly migrated bench database: `accounts` accounts without a webhook URL, created at
 * `createdAt` (SQL), account i with the one secret benchSecret(i); then `load`, with the secondary
 * indexes of `tables` dropped and rebuilt afterwards from their own definitions, so the measured
 * indexes are the migrations'; then VACUUM (ANALYZE). Returns the seconds it took.
 */
export async function seedBenchDatabase(
  databaseUrl: string,
  { accounts, createdAt, tables }: { accounts: number; createdAt: string; tables: string[] },
  log: (line: string) => void,
  load: (client: Client, progress: (step: string) => void) => Promise<void>,
): Promise<number> {
  const started = Date.now();
  const progress = (step: string): void =>
    log(`seeding: ${step} (${Math.round((Date.now() - started) / 1000)} s so far)`);
  const client = await seedingClient(databaseUrl);
  try {
    await client.query(
      `INSERT INTO accounts (id, name, webhook_url, created_at, updated_at)
       SELECT ${accountIdSql('i')}, 'Bench account ' || i, NULL, ${createdAt}, ${createdAt}
         FROM generate_series(0, ${accounts - 1}) AS i`,
    );
    const keyring = new SecretKeyring([Buffer.from(BENCH_SECRET_ENCRYPTION_KEY, 'base64')]);
    const secrets = Array.from({ length: accounts }, (_, i) => benchSecret(i));
    await client.query(
      `INSERT INTO account_secrets (id, account_id, secret_hash, secret_ciphertext, created_at, expires_at)
       SELECT md5('kyc-bench-secret-' || i)::uuid, ${accountIdSql('i')}, hash, ciphertext, ${createdAt}, NULL
         FROM unnest($1::int[], $2::bytea[], $3::text[]) AS t(i, hash, ciphertext)`,
      [secrets.map((_, i) => i), secrets.map((s) => hashSecret(s)), secrets.map((s) => keyring.seal(s))],
    );
    const defs = await dropSecondaryIndexes(client, tables);
    progress(`${defs.length} secondary indexes dropped`);
    await load(client, progress);
    progress('rebuilding indexes');
    await inParallel(databaseUrl, defs);
    progress('vacuum analyze');
    await inParallel(
      databaseUrl,
      [...tables, 'accounts', 'account_secrets'].map((t) => `VACUUM (ANALYZE) ${t}`),
    );
    return (Date.now() - started) / 1000;
  } finally {
    await client.end();
  }
}
