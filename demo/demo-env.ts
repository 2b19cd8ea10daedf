import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import type { Env } from 'src/config/app-config';
import { redisOptions } from 'src/webhooks/queue/webhook-queue.factory';

const DEFAULT_DATABASE_URL = 'postgres://postgres@localhost:5432/kyc';
const DEFAULT_REDIS_URL = 'redis://localhost:6379';

/**
 * The demo's settings: its own database (the configured one's name + `_demo`, so it can never be a
 * real one) and queue prefix, fresh tokens, local webhook targets allowed and a short retry schedule.
 */
export function demoEnvironment(env: Env): Record<string, string> {
  const database = new URL(env.DATABASE_URL || DEFAULT_DATABASE_URL);
  database.pathname = `/${decodeURIComponent(database.pathname.slice(1)) || 'kyc'}_demo`;
  return {
    NODE_ENV: 'development',
    DATABASE_URL: database.toString(),
    REDIS_URL: env.REDIS_URL || DEFAULT_REDIS_URL,
    QUEUE_PREFIX: `${env.QUEUE_PREFIX || 'bull'}_demo`,
    ADMIN_TOKEN: randomBytes(24).toString('base64url'),
    INTERNAL_API_TOKEN: randomBytes(24).toString('base64url'),
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    APP_ROLE: 'all',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s',
    WEBHOOK_TIMEOUT_MS: '3000',
    OUTBOX_SWEEP_INTERVAL_MS: '1000',
    RATE_LIMIT_PER_MINUTE: '1200',
  };
}

/** Drops and recreates the demo database; refuses any name that does not end in `_demo`. */
export async function resetDemoDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name.endsWith('_demo')) throw new Error(`refusing to reset database ${name}: not a demo database`);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString(), connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${url.host} (${(error as Error).message}); start it and run again`,
      { cause: error },
    );
  }
  try {
    const quoted = `"${name.replace(/"/g, '""')}"`;
    await client.query(`DROP DATABASE IF EXISTS ${quoted} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${quoted}`);
  } finally {
    await client.end();
  }
}

/** Deletes the demo's queue keys left by an earlier run; fails clearly when Redis is not there. */
export async function resetDemoQueue(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis({
    ...redisOptions(redisUrl),
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(
      `Redis is not reachable at ${new URL(redisUrl).host} (${(error as Error).message}); start it and run again`,
      { cause: error },
    );
  }
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}
