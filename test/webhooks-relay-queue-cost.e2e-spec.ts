import Queue from 'bull';
import Redis from 'ioredis';
import { DELIVERY_QUEUE } from 'src/webhooks/queue/webhook-queue.constants';
import { createAccount } from './helpers/factories';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const ACCOUNTS = 40;
const EVENTS_EACH = 25;

/**
 * Each relay pass asks Redis whether its overdue events still have a live job. While a backlog waits
 * in the queue, those are the queued jobs themselves, up to 500 a pass. Asked with Bull's getState,
 * each question ran a script reading the whole wait list (LRANGE 0 -1, then a loop in Lua): a pass
 * held Redis for as long as 500 such reads took, and every request needing Redis (a rate-limit
 * check, a delivery) waited behind it. The check is on the work Redis did, counted by the server
 * itself (INFO commandstats, which counts the commands scripts run): a job lookup per event asked
 * about, and no list read whole.
 */
describe('relay passes over a queued backlog', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let redis: Redis;
  let queue: Queue.Queue;
  const prefix = process.env.QUEUE_PREFIX as string;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    receiver.respondWith({ hang: true });
    // One delivery at a time, and it hangs: everything else the relay queues stays in the wait list.
    t = await startApp({
      OUTBOX_SWEEP_INTERVAL_MS: '500',
      WEBHOOK_CONCURRENCY: '1',
      WEBHOOK_TIMEOUT_MS: '600000',
      LOG_LEVEL: 'warn',
    });
    redis = new Redis(process.env.REDIS_URL as string);
    queue = new Queue(DELIVERY_QUEUE, process.env.REDIS_URL as string, { prefix: process.env.QUEUE_PREFIX });
  });

  afterAll(async () => {
    await queue?.close();
    redis?.disconnect();
    await t?.kill();
    await receiver?.close();
  });

  /** How many times Redis ran each command so far, scripts' commands included. */
  const calls = async (): Promise<Record<string, number>> => {
    const info = await redis.info('commandstats');
    return Object.fromEntries([...info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map((m) => [m[1], Number(m[2])]));
  };

  /**
   * Watches the commands Redis runs (MONITOR) and returns, when stopped, the most of the queue's
   * scripts one transaction (MULTI ... EXEC) ran, and how many ran inside transactions in all.
   */
  const watchTransactions = async (): Promise<() => Promise<{ largest: number; total: number }>> => {
    const monitor = await redis.monitor();
    const open = new Map<string, number>();
    let [largest, total] = [0, 0];
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      const command = String(args[0]).toLowerCase();
      if (command === 'multi') open.set(source, 0);
      else if (command === 'exec') {
        largest = Math.max(largest, open.get(source) ?? 0);
        open.delete(source);
      } else if (command === 'evalsha' && open.has(source) && String(args[3]).startsWith(prefix)) {
        open.set(source, (open.get(source) ?? 0) + 1);
        total++;
      }
    });
    return async () => {
      // The feed comes on a socket of its own: the last adds' lines may still be on their way.
      await new Promise((resolve) => setTimeout(resolve, 500));
      monitor.disconnect();
      return { largest, total };
    };
  };

  it('queues the backlog in short transactions, and asks about each queued job without reading the wait list whole', async () => {
    // A transaction runs whole before Redis serves any other client: the relay's adds go in small ones.
    const transactions = await watchTransactions();
    const accounts = [];
    for (let i = 0; i < ACCOUNTS; i++) accounts.push(await createAccount(t, { webhook_url: receiver.url }));
    // Lost events of many accounts (few each, so the relay queues them all): pending, overdue, no job.
    await t.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
       SELECT gen_random_uuid(), a, gen_random_uuid(), 'verification.status_changed', '{}',
              now() - interval '1 hour', 'pending', now() - interval '1 hour' + n * interval '1 ms'
         FROM unnest($1::uuid[]) AS a, generate_series(1, $2::int) AS n`,
      [accounts.map((a) => a.id), EVENTS_EACH],
    );
    const backlog = ACCOUNTS * EVENTS_EACH;
    await waitFor(
      () => queue.getWaitingCount(),
      (waiting) => waiting >= backlog - 10,
      'the backlog queued',
      30_000,
    );
    const { largest, total } = await transactions();
    console.log(`the backlog's adds: ${total} in transactions, at most ${largest} in one`);
    expect(total).toBeGreaterThanOrEqual(backlog - 10);
    expect(largest).toBeLessThanOrEqual(50);
    // Relayed events are due again 3 s after their pass: from then on each pass asks about 500 of them.
    await new Promise((resolve) => setTimeout(resolve, 4_000));
    const before = await calls();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const after = await calls();
    const ran = (command: string) => (after[command] ?? 0) - (before[command] ?? 0);
    console.log(`relay passes over ${backlog} queued jobs: ${ran('hgetall')} job lookups, ${ran('lrange')} LRANGE`);
    // At least two passes' worth of questions (each a job lookup, HGETALL)...
    expect(ran('hgetall')).toBeGreaterThanOrEqual(1_000);
    // ...and the few LRANGEs Bull itself runs (its stalled-job check reads the active list): not one
    // per question (2,000 and more with getState).
    expect(ran('lrange')).toBeLessThan(50);
    // Nothing was relayed twice: the queued jobs are still the backlog's, one each.
    expect(await queue.getWaitingCount()).toBeLessThanOrEqual(backlog);
  }, 90_000);
});
