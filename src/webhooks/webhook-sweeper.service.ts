import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { EndpointStates } from 'src/webhooks/endpoint-states.service';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { type DeliveryJobSource, deliveryJobId } from 'src/webhooks/delivery-job';
import { WebhookEventRepository } from 'src/webhooks/webhook-event.repository';
import { DELIVERY_PRODUCER } from 'src/webhooks/webhook-queue.constants';

/** An event is relayed once it is this late: well past the enqueue after commit or a Bull delay. */
const OVERDUE_MS = 3_000;
const BATCH = 500;
const SWEEP_LOCK = 7_277_003;

/**
 * The relay: finds pending events that are due but have no live job (Redis was down at commit, the
 * process died between commit and enqueue, an operator removed or cleaned the job in the dashboard)
 * and enqueues them again. Safe with many workers: one sweeps at a time (advisory lock), and job
 * ids make re-adds no-ops.
 */
@Injectable()
export class WebhookSweeper {
  private readonly logger = new Logger(WebhookSweeper.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: WebhookEventRepository,
    @Inject(DELIVERY_PRODUCER) private readonly queue: Queue,
    private readonly dispatcher: WebhookDispatcher,
    private readonly endpoints: EndpointStates,
  ) {}

  /** One pass; returns how many events were (re)enqueued. */
  async sweep(): Promise<number> {
    const relayed = await this.relay();
    await this.advanceReleases();
    return relayed;
  }

  /**
   * Released events wait their turn until an attempt of their account lets the next through; if the
   * worker that made it died before it did, this moves them on. Concurrent calls are harmless:
   * each account's promotions are one at a time.
   */
  private async advanceReleases(): Promise<void> {
    for (const accountId of await this.events.accountsWithWaiting(BATCH)) await this.endpoints.advance(accountId);
  }

  private async relay(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [SWEEP_LOCK])) as {
        locked: boolean;
      }[];
      if (!locked) return 0;
      const due = await this.events.overdue(manager, OVERDUE_MS / 1000, BATCH);
      const missing: DeliveryJobSource[] = [];
      for (const event of due) {
        const job = await this.queue.getJob(deliveryJobId({ eventId: event.id, cycle: event.cycle }));
        if (job) {
          const state = await job.getState();
          if (state !== 'completed' && state !== 'failed') continue;
          await job.remove();
        }
        missing.push(event);
      }
      if (missing.length > 0) {
        await this.dispatcher.enqueue(missing);
        this.logger.log(`relayed ${missing.length} webhook event(s) to the delivery queue`);
      }
      return missing.length;
    });
  }
}
