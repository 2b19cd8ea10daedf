import Redis from 'ioredis';
import { Client } from 'pg';

/**
 * Runs before each spec file's own hooks: what earlier spec files left in the run's shared database
 * and queue cannot reach this one. Their services are stopped by then, but their pending events are
 * not: this file's sweeper would relay them and its worker attempt them (against receivers that are
 * gone), moving the counters, alerts and log lines the spec asserts on. So the run's pending events
 * end as failed, and the run's queue keys go (no service of the run is up between spec files).
 */
beforeAll(async () => {
  const db = new Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  try {
    await db.query(
      `UPDATE webhook_events SET delivery_status = 'failed', next_attempt_at = NULL,
              last_error = 'left pending by an earlier spec file'
        WHERE delivery_status = 'pending'`,
    );
  } finally {
    await db.end();
  }
  const prefix = process.env.QUEUE_PREFIX ?? '';
  if (!/test/.test(prefix)) throw new Error(`Refusing to clear queue prefix ${prefix}: it does not say test`);
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
});
