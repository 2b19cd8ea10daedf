import type { Pool } from 'pg';
import { TestApp, startApp } from '../helpers/test-app';
import {
  ApiClient,
  CountingReceiver,
  FAST_DELIVERY,
  RetryingTransitions,
  deliveryCounts,
  figures,
  pool,
  report,
  runDb,
  sleep,
  tokens,
  waitForDeliveries,
  StalledWatch,
  watchStalled,
} from './harness';

const VERIFICATIONS = 1_000;
const ACCOUNTS = 20;
const KILL_EVERY_MS = 3_000;
const MAX_KILLS = 8;
const PACE_MS = 20;

describe('a worker process SIGKILLed every few seconds during 2,000 deliveries', () => {
  const receiver = new CountingReceiver();
  const prefix = `${process.env.QUEUE_PREFIX}_kill`;
  const env = { ...FAST_DELIVERY, QUEUE_PREFIX: prefix, WEBHOOK_TIMEOUT_MS: '2000' };
  let api: TestApp | undefined;
  let worker: TestApp | undefined;
  let db: Pool;
  // Closed in afterAll too, so a failed run leaves no Redis connection holding Jest open.
  let stalled: StalledWatch | undefined;

  beforeAll(async () => {
    await receiver.start();
    db = runDb();
  });

  afterAll(async () => {
    await stalled?.close();
    await worker?.close();
    await api?.close();
    await receiver.stop();
    await db.end();
  });

  it('loses nothing; duplicates are counted', async () => {
    api = await startApp({ ...env, APP_ROLE: 'api' });
    worker = await startApp({ ...env, APP_ROLE: 'worker' });
    receiver.reply = { status: 200, delayMs: 25 };
    stalled = await watchStalled(prefix);
    const client = new ApiClient(api.url, tokens());
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, (_, i) => client.createAccount(`worker-kill ${i}`, receiver.url)),
    );
    const accountIds = accounts.map((a) => a.id);
    const verifications = await pool(
      Array.from({ length: VERIFICATIONS }, (_, i) => i),
      8,
      (i) => client.createVerification(accounts[i % ACCOUNTS].id, `worker-kill-${i}`),
    );

    let driving = true;
    const started = Date.now();
    const transitions = new RetryingTransitions([client]);
    // Paced over about 20 s so the kills land during deliveries however fast the machine is.
    const drive = pool(verifications, 12, async (id, i) => {
      const due = started + i * PACE_MS;
      if (due > Date.now()) await sleep(due - Date.now());
      return [await transitions.run(id, 'processing'), await transitions.run(id, 'approved')];
    }).finally(() => (driving = false));

    let kills = 0;
    let deliveredAtKills: number[] = [];
    while (kills < MAX_KILLS) {
      await sleep(KILL_EVERY_MS);
      const counts = await deliveryCounts(db, accountIds);
      if (!driving && counts.pending === 0) break;
      await worker.kill();
      kills += 1;
      deliveredAtKills = [...deliveredAtKills, counts.delivered];
      worker = await startApp({ ...env, APP_ROLE: 'worker' });
    }
    const statuses = (await drive).flat();
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    await waitForDeliveries(db, accountIds, statuses.length, 120_000);
    const attempts = await db.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id WHERE e.account_id = ANY($1::uuid[])',
      [accountIds],
    );
    await stalled.close();
    const result = await figures(db, accountIds, receiver, {
      kills,
      stalled_jobs_recovered: stalled.ids.size,
      retried_503: transitions.retried,
      delivered_in_db_at_each_kill: deliveredAtKills.join('/'),
      attempts_recorded: attempts.rows[0].count,
      receiver_requests: receiver.requests,
      all_delivered_after_s: ((Date.now() - started) / 1000).toFixed(1),
    });
    report('worker-sigkill', result);
    expect(kills).toBeGreaterThanOrEqual(3);
    expect(result.created).toBe(2 * VERIFICATIONS);
    expect(result.lost).toBe(0);
  });
});
