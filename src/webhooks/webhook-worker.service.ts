import { InjectQueue } from '@nestjs/bull';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Queue } from 'bull';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { WebhookDeliveryProcessor } from 'src/webhooks/webhook-delivery.processor';
import { DELIVER_JOB, DELIVERY_QUEUE, DeliveryJobData } from 'src/webhooks/webhook-queue.constants';
import { WebhookSweeper } from 'src/webhooks/webhook-sweeper.service';

/**
 * The worker role: takes delivery jobs (WEBHOOK_CONCURRENCY at a time) and runs the sweeper. The
 * handler is registered here rather than with @Process so that concurrency comes from the validated
 * config and an `api` process never takes jobs. On shutdown it stops taking jobs and waits for the
 * deliveries in flight (each bounded by WEBHOOK_TIMEOUT_MS) before the database closes.
 */
@Injectable()
export class WebhookWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookWorker.name);
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private stopped = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
    private readonly processor: WebhookDeliveryProcessor,
    private readonly sweeper: WebhookSweeper,
  ) {}

  onApplicationBootstrap(): void {
    // Every role keeps the queue-depth and backlog gauges fresh for its own /metrics.
    this.timer = setInterval(() => this.tick(), this.config.sweepIntervalMs);
    if (this.config.appRole === 'api') return;
    this.queue.on('error', (error: Error) => this.logger.warn(`delivery queue: ${error.message}`));
    this.queue
      .process(DELIVER_JOB, this.config.webhookConcurrency, (job) => this.processor.process(job))
      .catch((error: unknown) => this.logger.error(`delivery worker stopped: ${(error as Error).message}`));
    this.logger.log(`delivering webhooks, ${this.config.webhookConcurrency} at a time`);
  }

  private tick(): void {
    if (this.sweeping || this.stopped) return;
    this.sweeping = (async () => {
      try {
        if (this.config.appRole !== 'api') await this.sweeper.sweep();
        await this.sweeper.updateGauges();
      } catch (error) {
        this.logger.warn(`outbox sweep failed: ${(error as Error).message}`);
      } finally {
        this.sweeping = undefined;
      }
    })();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
    if (this.config.appRole !== 'api') {
      // With Redis gone Bull may never confirm the close; in-flight work is bounded by the time-out.
      const bound = new Promise<void>((resolve) => setTimeout(resolve, this.config.webhookTimeoutMs + 5_000).unref());
      await Promise.race([this.queue.close().catch(() => undefined), bound]);
    }
    this.processor.close();
  }
}
