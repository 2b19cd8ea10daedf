import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Queue } from 'bull';
import { DELIVER_JOB, DELIVERY_PRODUCER, DeliveryJobData, deliveryJobId } from 'src/webhooks/webhook-queue.constants';

const SHUTDOWN_ENQUEUE_WAIT_MS = 3_000;

/**
 * Hands committed outbox events to the delivery queue without making the caller wait: Redis being
 * slow or down only delays the webhook (the sweeper relays it), never the API response.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  /** Enqueues not yet confirmed; shutdown lets them finish (each bounded by the command time-out). */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(@Inject(DELIVERY_PRODUCER) private readonly queue: Queue) {}

  /** Events of their first delivery cycle (fresh from a status change). */
  dispatch(eventIds: string[]): void {
    this.dispatchJobs(eventIds.map((eventId) => ({ eventId, cycle: 1 })));
  }

  dispatchJobs(jobs: DeliveryJobData[]): void {
    if (jobs.length === 0) return;
    const pending = this.enqueue(jobs)
      .catch((error: unknown) => {
        this.logger.warn(
          `could not enqueue ${jobs.length} webhook event(s), the sweeper will relay them: ${(error as Error).message}`,
        );
      })
      .finally(() => this.inFlight.delete(pending));
    this.inFlight.add(pending);
  }

  /** Awaitable form for the sweeper; re-adding an existing (id, cycle) is a no-op. */
  async enqueue(jobs: DeliveryJobData[]): Promise<void> {
    await this.queue.addBulk(jobs.map((data) => ({ name: DELIVER_JOB, data, opts: { jobId: deliveryJobId(data) } })));
  }

  async onApplicationShutdown(): Promise<void> {
    // Bounded: with Redis down an enqueue may wait for a connection that never comes.
    const bound = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_ENQUEUE_WAIT_MS).unref());
    await Promise.race([Promise.all(this.inFlight), bound]);
    await this.queue.close().catch(() => undefined);
  }
}
