import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { DELIVERY_PRODUCER, DeliveryJobData, deliveryJobId } from 'src/webhooks/webhook-queue.constants';

/** An event is relayed once it is this late: well past the enqueue after commit or a Bull delay. */
const OVERDUE_MS = 3_000;
const BATCH = 500;
const SWEEP_LOCK = 7_277_003;

/**
 * The relay: finds pending events that are due but have no live job (Redis was down at commit, the
 * process died between commit and enqueue, a job was lost) and enqueues them again. Safe with many
 * workers: one sweeps at a time (advisory lock), and job ids make re-adds no-ops.
 */
@Injectable()
export class WebhookSweeper {
  private readonly logger = new Logger(WebhookSweeper.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DELIVERY_PRODUCER) private readonly queue: Queue<DeliveryJobData>,
    private readonly dispatcher: WebhookDispatcher,
  ) {}

  /** One pass; returns how many events were (re)enqueued. */
  async sweep(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [SWEEP_LOCK])) as {
        locked: boolean;
      }[];
      if (!locked) return 0;
      const due: { id: string; cycle: number }[] = await manager.query(
        `SELECT id, cycle FROM webhook_events
          WHERE delivery_status = 'pending' AND next_attempt_at < now() - make_interval(secs => $1)
          ORDER BY next_attempt_at LIMIT $2`,
        [OVERDUE_MS / 1000, BATCH],
      );
      const missing: DeliveryJobData[] = [];
      for (const row of due) {
        const data = { eventId: row.id, cycle: row.cycle };
        const job = await this.queue.getJob(deliveryJobId(data));
        if (job) {
          const state = await job.getState();
          if (state !== 'completed' && state !== 'failed') continue;
          await job.remove();
        }
        missing.push(data);
      }
      if (missing.length > 0) {
        await this.dispatcher.enqueue(missing);
        this.logger.log(`relayed ${missing.length} webhook event(s) to the delivery queue`);
      }
      return missing.length;
    });
  }
}
