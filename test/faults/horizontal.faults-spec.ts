import type { Pool } from 'pg';
import { TestApp, startApp } from '../helpers/test-app';
import {
  ApiClient,
  CountingReceiver,
  FAST_DELIVERY,
  RetryingTransitions,
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

const VERIFICATIONS = 2_500;
const ACCOUNTS = 20;

/** Events the sweepers relayed, from the workers' own log lines. */
function relayed(worker: TestApp): number {
  return worker.output
    .join('')
    .split('\n')
    .reduce((sum, line) => sum + Number(/relayed (\d+) webhook event/.exec(line)?.[1] ?? 0), 0);
}

describe('horizontal run: 2 API processes and 2 worker processes', () => {
  const receiver = new CountingReceiver();
  const env = { ...FAST_DELIVERY, QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_hz` };
  const processes: TestApp[] = [];
  let db: Pool;
  // Closed in afterAll too, so a failed run leaves no Redis connection holding Jest open.
  let stalled: StalledWatch | undefined;

  beforeAll(async () => {
    await receiver.start();
    db = runDb();
    await db.query('SELECT 1'); // its connection made before the services take theirs
  });

  afterAll(async () => {
    await stalled?.close();
    for (const app of processes) await app.close();
    await receiver.stop();
    await db.end();
  });

  it('delivers every one of 5,000 events at least once, and the sweepers never enqueue one twice', async () => {
    const apis = await Promise.all([startApp({ ...env, APP_ROLE: 'api' }), startApp({ ...env, APP_ROLE: 'api' })]);
    const workers = await Promise.all([
      startApp({ ...env, APP_ROLE: 'worker', LOG_LEVEL: 'info' }),
      startApp({ ...env, APP_ROLE: 'worker', LOG_LEVEL: 'info' }),
    ]);
    processes.push(...apis, ...workers);
    stalled = await watchStalled(env.QUEUE_PREFIX);
    const clients = apis.map((app) => new ApiClient(app.url, tokens()));
    const accounts = await Promise.all(
      Array.from({ length: ACCOUNTS }, (_, i) => clients[i % 2].createAccount(`horizontal ${i}`, receiver.url)),
    );
    const accountIds = accounts.map((a) => a.id);

    // Creates and each verification's two transitions go to both API processes; a 503 (a pool connection
    // not ready within 1 s on an overloaded machine) is retried, as a client would.
    const transitions = new RetryingTransitions(clients);
    const createdAt = Date.now();
    const verifications = await pool(
      Array.from({ length: VERIFICATIONS }, (_, i) => i),
      16,
      (i) => transitions.create(accountIds[i % ACCOUNTS], `horizontal-${i}`, i % 2),
    );
    const createSeconds = (Date.now() - createdAt) / 1000;
    const started = Date.now();
    const statuses = (
      await pool(verifications, 16, async (id, i) => [
        await transitions.run(id, 'processing', i % 2),
        await transitions.run(id, 'approved', (i + 1) % 2),
      ])
    ).flat();
    const driveSeconds = (Date.now() - started) / 1000;
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    await waitForDeliveries(db, accountIds, statuses.length, 180_000);
    const deliverSeconds = (Date.now() - started) / 1000;
    const attempts = await db.query<{ attempt_count: number; events: number }>(
      `SELECT attempt_count, count(*)::int AS events FROM webhook_events WHERE account_id = ANY($1::uuid[]) GROUP BY 1 ORDER BY 1`,
      [accountIds],
    );
    // With everything delivered, more sweeps must enqueue nothing: the receiver count stays put.
    const requestsWhenDone = receiver.requests;
    await sleep(4 * Number(env.OUTBOX_SWEEP_INTERVAL_MS) + 3_500);
    const lateRequests = receiver.requests - requestsWhenDone;
    await stalled.close();
    const byAttempts = attempts.rows.map((row) => `${row.attempt_count}:${row.events}`).join(',');
    const result = await figures(db, accountIds, receiver, {
      processes: '2 api + 2 worker',
      create_per_s: Math.round(VERIFICATIONS / createSeconds),
      transitions_per_s: Math.round(statuses.length / driveSeconds),
      retried_503: transitions.retried,
      delivered_per_s: Math.round(statuses.length / deliverSeconds),
      all_delivered_after_s: deliverSeconds.toFixed(1),
      events_by_attempt_count: byAttempts,
      sweeper_relays: relayed(workers[0]) + relayed(workers[1]),
      stalled_jobs: stalled.ids.size,
      requests_after_done: lateRequests,
      duplicate_gaps_ms: receiver.duplicateGaps().join('/') || '-',
    });
    report('horizontal', result);
    expect(result.created).toBe(statuses.length);
    expect(result.lost).toBe(0);
    // Sweeps after the last delivery find nothing to relay; duplicates (if any) are reported above,
    // with their gaps, stalled jobs and relays, for docs/reliability.md.
    expect(lateRequests).toBe(0);
  });
});
