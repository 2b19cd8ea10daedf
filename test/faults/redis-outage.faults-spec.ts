import type { Pool } from 'pg';
import { RedisServer } from '../helpers/redis-server';
import { TestApp, startApp } from '../helpers/test-app';
import {
  ApiClient,
  CountingReceiver,
  FAST_DELIVERY,
  figures,
  pool,
  report,
  runDb,
  sleep,
  tokens,
  waitForDeliveries,
} from './harness';

const VERIFICATIONS = 250;
const ACCOUNTS = 10;
const STREAM_MS = 25_000;
const OUTAGE_AT_MS = 3_000;
const OUTAGE_MS = 20_000;

describe('Redis stopped for 20 s during a stream of 500 transitions', () => {
  const receiver = new CountingReceiver();
  let redis: RedisServer;
  let app: TestApp | undefined;
  let db: Pool;

  beforeAll(async () => {
    await receiver.start();
    redis = await RedisServer.reserve();
    await redis.start();
    db = runDb();
  });

  afterAll(async () => {
    await app?.close();
    await redis.stop();
    await receiver.stop();
    await db.end();
  });

  it('commits every transition during the outage and delivers every event once Redis is back', async () => {
    app = await startApp({ ...FAST_DELIVERY, REDIS_URL: redis.url, APP_ROLE: 'all' });
    const api = new ApiClient(app.url, tokens());
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, (_, i) => api.createAccount(`redis-outage ${i}`, receiver.url)),
    );
    const verifications = await pool(
      Array.from({ length: VERIFICATIONS }, (_, i) => i),
      8,
      (i) => api.createVerification(accounts[i % ACCOUNTS].id, `redis-outage-${i}`),
    );
    const steps = [
      ...verifications.map((id) => ({ id, status: 'processing' as const })),
      ...verifications.map((id) => ({ id, status: 'approved' as const })),
    ];

    const started = Date.now();
    const outage = (async () => {
      await sleep(OUTAGE_AT_MS);
      await redis.stop();
      const stoppedAt = Date.now() - started;
      await sleep(OUTAGE_MS);
      await redis.start();
      return { stoppedAt, restartedAt: Date.now() - started };
    })();
    const spacing = STREAM_MS / steps.length;
    let slowest = 0;
    const sentAt: number[] = [];
    const statuses = await pool(steps, 16, async (step, index) => {
      const due = started + index * spacing;
      if (due > Date.now()) await sleep(due - Date.now());
      const at = Date.now();
      const status = await api.transition(step.id, step.status);
      slowest = Math.max(slowest, Date.now() - at);
      sentAt[index] = at - started;
      return status;
    });
    const window = await outage;
    const duringOutage = sentAt.filter((at) => at >= window.stoppedAt && at < window.restartedAt).length;

    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    await waitForDeliveries(
      db,
      accounts.map((a) => a.id),
      steps.length,
      90_000,
    );
    const result = await figures(
      db,
      accounts.map((a) => a.id),
      receiver,
      {
        transitions: steps.length,
        committed: statuses.filter((status) => status === 200).length,
        during_outage: duringOutage,
        slowest_transition_ms: slowest,
        redis_down_s: `${(window.stoppedAt / 1000).toFixed(1)}-${(window.restartedAt / 1000).toFixed(1)}`,
        all_delivered_after_s: ((Date.now() - started) / 1000).toFixed(1),
      },
    );
    report('redis-outage', result);
    expect(result.created).toBe(steps.length);
    expect(result.lost).toBe(0);
  });
});
