import { Client } from 'pg';
import { clearQueueKeys } from './queue-keys';

/**
 * Runs before each spec file's own hooks: what earlier spec files left in the database and queue
 * this file shares with them (its worker's: test/setup/worker-env.ts) cannot reach this one. Their
 * services are stopped by then, but their pending events are not: this file's sweeper would relay
 * them and its worker attempt them (against receivers that are gone), moving the counters, alerts and
 * log lines the spec asserts on. So the database's pending events end as failed, and the worker's
 * queue keys go (no service of the worker is up between spec files).
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
  await clearQueueKeys(process.env.QUEUE_PREFIX ?? '');
});
