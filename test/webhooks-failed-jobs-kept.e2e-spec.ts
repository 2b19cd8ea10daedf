import Queue from 'bull';
import { DeliveryGaveUp, retryBackoff } from 'src/webhooks/queue/delivery-retry';
import {
  DELIVERY_JOB_OPTIONS,
  DELIVERY_QUEUE,
  DELIVERY_QUEUE_SETTINGS,
  RETRY_BACKOFF,
} from 'src/webhooks/queue/webhook-queue.constants';
import { waitFor } from './helpers/poll';

/**
 * The dashboard's Failed tab is the list of dead deliveries of every account: one account's flood
 * of dead jobs never removes another account's failed job while it is within its retention. Real
 * Redis, the delivery queue's own job options and backoff (a cycle that gives up fails for good).
 */
describe("the Failed tab keeps every account's dead deliveries within their retention", () => {
  const queue = new Queue(DELIVERY_QUEUE, process.env.REDIS_URL as string, {
    prefix: `${process.env.QUEUE_PREFIX}_failedkept`,
    settings: { ...DELIVERY_QUEUE_SETTINGS, backoffStrategies: { [RETRY_BACKOFF]: retryBackoff } },
  });

  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });

  it("keeps account B's dead delivery through 10,001 dead deliveries of account A", async () => {
    void queue.process(200, async (job) => {
      throw new DeliveryGaveUp(`gave up after 8 attempts: HTTP 500 (${String(job.data.accountId)})`);
    });
    const theirs = await queue.add({ accountId: 'B' }, { ...DELIVERY_JOB_OPTIONS, jobId: 'b:1' });
    await waitFor(
      () => theirs.getState(),
      (state) => state === 'failed',
      "B's job to fail",
    );

    const flood = 10_001;
    for (let i = 0; i < flood; i += 1_000) {
      await queue.addBulk(
        Array.from({ length: Math.min(1_000, flood - i) }, (_, n) => ({
          data: { accountId: 'A' },
          opts: { ...DELIVERY_JOB_OPTIONS, jobId: `a:${i + n}` },
        })),
      );
    }
    await waitFor(
      () => queue.getJobCounts(),
      (counts) => counts.waiting + counts.active === 0,
      "A's flood to fail",
      120_000,
    );
    const failed = await queue.getFailed();
    expect(failed.some((job) => job.id === 'b:1')).toBe(true);
    expect(await queue.getJob('b:1')).not.toBeNull();
  }, 180_000);
});
