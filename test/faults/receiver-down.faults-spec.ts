import type { Pool } from 'pg';
import { TestApp, startApp } from '../helpers/test-app';
import {
  ApiClient,
  CountingReceiver,
  FAST_DELIVERY,
  deliveryCounts,
  figures,
  pool,
  report,
  runDb,
  sleep,
  tokens,
  waitForDeliveries,
  waitUntil,
} from './harness';

const PER_BATCH = 100;
const ACCOUNTS = 4;

describe('the receiver down for a while, then back', () => {
  const receiver = new CountingReceiver();
  let app: TestApp | undefined;
  let db: Pool;

  beforeAll(async () => {
    await receiver.start();
    await receiver.stop();
    db = runDb();
  });

  afterAll(async () => {
    await app?.close();
    await receiver.stop();
    await db.end();
  });

  it('retries deliver what is still in its schedule; what ran out is failed and a bulk redeliver brings it home', async () => {
    app = await startApp({
      ...FAST_DELIVERY,
      WEBHOOK_RETRY_SCHEDULE: '500ms,1s,2s,4s',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_rcv`,
      APP_ROLE: 'all',
    });
    const client = new ApiClient(app.url, tokens());
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, (_, i) => client.createAccount(`receiver-down ${i}`, receiver.url)),
    );
    const accountIds = accounts.map((a) => a.id);
    const batch = async (name: string): Promise<void> => {
      const ids = await pool(
        Array.from({ length: PER_BATCH }, (_, i) => i),
        8,
        (i) => client.createVerification(accountIds[i % ACCOUNTS], `${name}-${i}`),
      );
      const statuses = await pool(ids, 8, (id) => client.transition(id, 'processing'));
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
    };

    // Batch A runs out of its schedule (5 attempts over about 7.5 s) while the receiver is down.
    await batch('early');
    await waitForDeliveries(db, accountIds, PER_BATCH, 120_000);
    const afterA = await deliveryCounts(db, accountIds);
    expect(afterA.failed).toBe(PER_BATCH);

    // Batch B fails its first attempts, then the receiver comes back within its schedule.
    await batch('late');
    await sleep(1_500);
    await receiver.start();
    await waitForDeliveries(db, accountIds, 2 * PER_BATCH, 120_000);
    const afterB = await deliveryCounts(db, accountIds);
    expect(afterB.delivered).toBe(PER_BATCH);

    let redelivered = 0;
    for (const account of accounts) {
      const res = await client.call('POST', '/api/v1/public/kyc/webhook-events/redeliver', account.secret, {
        delivery_status: 'failed',
      });
      expect(res.status).toBe(202);
      redelivered += Number(res.body.count);
    }
    expect(redelivered).toBe(PER_BATCH);
    await waitUntil(
      async () => (await deliveryCounts(db, accountIds)).delivered === 2 * PER_BATCH,
      120_000,
      'the redelivered events',
    );
    const attempts = await db.query<{ max: number; min: number }>(
      `SELECT max(attempt_count)::int AS max, min(attempt_count)::int AS min FROM webhook_events WHERE account_id = ANY($1::uuid[])`,
      [accountIds],
    );
    const result = await figures(db, accountIds, receiver, {
      delivered_by_retries: afterB.delivered,
      failed_past_schedule: afterA.failed,
      bulk_redelivered: redelivered,
      attempts_per_event: `${attempts.rows[0].min}-${attempts.rows[0].max}`,
    });
    report('receiver-down', result);
    expect(result.created).toBe(2 * PER_BATCH);
    expect(result.lost).toBe(0);
    // The waits above guard against a hang, not a speed: each allows 2 minutes on a loaded machine.
  }, 420_000);
});
