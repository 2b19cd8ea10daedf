import { InjectQueue } from '@nestjs/bull';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Queue } from 'bull';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { WebhookDeliveryProcessor } from 'src/webhooks/webhook-delivery.processor';
import { WebhookHttpClient } from 'src/webhooks/webhook-http.client';
import type { DeliveryJobData } from 'src/webhooks/delivery-job';
import { DELIVERY_QUEUE } from 'src/webhooks/webhook-queue.constants';
import { closeDeliveryQueue } from 'src/webhooks/webhook-queue.factory';

/** Bull's name for "jobs of every name": a job is named by its event type. */
const EVERY_JOB_NAME = '*';
import { WebhookSweeper } from 'src/webhooks/webhook-sweeper.service';

/**
 * The worker role: takes delivery jobs (WEBHOOK_CONCURRENCY at a time) and runs the sweeper. The
 * handler is registered here rather than with @Process so that concurrency comes from the validated
 * config. On shutdown it stops taking jobs and waits for the deliveries in flight (each bounded by
 * WEBHOOK_TIMEOUT_MS) before the database closes.
 */
@Injectable()
export class WebhookWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookWorker.name);
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
    private readonly processor: WebhookDeliveryProcessor,
    private readonly sweeper: WebhookSweeper,
    private readonly http: WebhookHttpClient,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.sweep(), this.config.sweepIntervalMs);
    this.queue.on('error', (error: Error) => this.logger.warn(`delivery queue: ${error.message}`));
    this.queue
      .process(EVERY_JOB_NAME, this.config.webhookConcurrency, (job) => this.processor.process(job))
      .catch((error: unknown) => this.logger.error(`delivery worker stopped: ${(error as Error).message}`));
    this.logger.log(`delivering webhooks, ${this.config.webhookConcurrency} at a time`);
  }

  private sweep(): void {
    if (this.sweeping) return;
    this.sweeping = this.sweeper
      .sweep()
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn(`outbox sweep failed: ${(error as Error).message}`))
      .finally(() => (this.sweeping = undefined));
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.sweeping;
    // With Redis gone Bull may never confirm the close; in-flight work is bounded by the time-out.
    const bound = new Promise<void>((resolve) => setTimeout(resolve, this.config.webhookTimeoutMs + 5_000).unref());
    await Promise.race([closeDeliveryQueue(this.queue).catch(() => undefined), bound]);
    this.http.close();
  }
}
