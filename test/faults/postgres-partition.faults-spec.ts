import type { Pool } from 'pg';
import { databaseServer } from '../helpers/ops-infra';
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
  startPausableProxy,
  tokens,
  waitForDeliveries,
  waitUntil,
} from './harness';

/** The contract's "503 quickly": an upper bound, not a benchmark. */
const FAST_MS = 7_000;

describe('PostgreSQL silent (a partition: packets held, no reset)', () => {
  const receiver = new CountingReceiver();
  let proxy: Awaited<ReturnType<typeof startPausableProxy>>;
  let app: TestApp | undefined;
  let db: Pool;

  beforeAll(async () => {
    await receiver.start();
    proxy = await startPausableProxy(databaseServer().port, databaseServer().host);
    db = runDb();
  });

  afterAll(async () => {
    await app?.close();
    await proxy.close();
    await receiver.stop();
    await db.end();
  });

  it('answers 503 within a few seconds instead of hanging, and recovers when the network does', async () => {
    const url = new URL(process.env.DATABASE_URL as string);
    url.host = `127.0.0.1:${proxy.port}`;
    app = await startApp({
      ...FAST_DELIVERY,
      DATABASE_URL: url.toString(),
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_part`,
      APP_ROLE: 'all',
    });
    const client = new ApiClient(app.url, tokens());
    const account = await client.createAccount('pg-partition', receiver.url);
    const verifications = await pool(
      Array.from({ length: 20 }, (_, i) => i),
      4,
      (i) => client.createVerification(account.id, `pg-partition-${i}`),
    );
    // Warm the pool so requests use connections that go silent, not only new ones.
    await pool(verifications, 8, () => client.call('GET', '/api/v1/public/kyc/verifications', account.secret));

    proxy.pause();
    const started = Date.now();
    const answers = await Promise.all(
      verifications.slice(0, 10).map(async (id, i) => {
        const at = Date.now();
        const res =
          i % 2
            ? await client.call('GET', '/api/v1/public/kyc/verifications', account.secret)
            : await client.transition(id, 'processing').then((status) => ({ status, body: {} }));
        return { status: res.status, ms: Date.now() - at };
      }),
    );
    await sleep(Math.max(0, 8_000 - (Date.now() - started)));
    proxy.resume();
    await waitUntil(
      async () => (await client.call('GET', '/api/v1/public/kyc/verifications', account.secret)).status === 200,
      30_000,
      'recovery',
    );
    const slowest = Math.max(...answers.map((a) => a.ms));
    const retried = await pool(verifications, 4, (id) => client.transition(id, 'processing'));
    expect(retried.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const changes = (
      await db.query<{ n: number }>('SELECT sum(version - 1)::int AS n FROM verifications WHERE account_id = $1', [
        account.id,
      ])
    ).rows[0].n;
    await waitForDeliveries(db, [account.id], changes, 60_000);
    const result = await figures(db, [account.id], receiver, {
      statuses_while_silent: answers.map((a) => a.status).join('/'),
      slowest_ms: slowest,
    });
    report('postgres-silent', result);
    expect(answers.filter((a) => a.status !== 503)).toEqual([]);
    expect(slowest).toBeLessThan(FAST_MS);
    expect(result.lost).toBe(0);
  }, 120_000);
});
