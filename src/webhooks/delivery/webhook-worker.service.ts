import { InjectQueue } from '@nestjs/bull';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { redisErrorMessage } from 'src/redis/redis-errors';
import { BUSY_LAG_MS, LoopGovernor, WORKER_BUSY_LAG_MS } from 'src/webhooks/delivery/loop-governor';
import { WebhookDeliveryProcessor } from 'src/webhooks/delivery/webhook-delivery.processor';
import { WebhookHttpClient } from 'src/webhooks/delivery/webhook-http.client';
import { type DeliveryJobData, WAITING } from 'src/webhooks/queue/delivery-job';
import { DELIVERY_QUEUE } from 'src/webhooks/queue/webhook-queue.constants';
import { closeDeliveryQueue } from 'src/webhooks/queue/webhook-queue.factory';

import { WebhookSweeper } from 'src/webhooks/delivery/webhook-sweeper.service';

/** Bull's name for "jobs of every name": a job is named by its event type. */
const EVERY_JOB_NAME = '*';
/** Beyond WEBHOOK_TIMEOUT_MS after the stop, for the queue's own close. */
const CLOSE_MARGIN_MS = 1_000;
const CLOSE_MIN_MS = 500;

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
  private inFlight = 0;
  /** Set when the worker stopped taking jobs: in-flight deliveries have until then + WEBHOOK_TIMEOUT_MS. */
  private stoppedAt?: number;
  private pausing?: Promise<void>;
  /** Maintenance deliveries wait for the event loop to be free of other work (loop-governor.ts). */
  private readonly governor: LoopGovernor;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
    private readonly processor: WebhookDeliveryProcessor,
    private readonly sweeper: WebhookSweeper,
    private readonly http: WebhookHttpClient,
  ) {
    const busyLagMs = config.appRole === 'worker' ? WORKER_BUSY_LAG_MS : BUSY_LAG_MS;
    this.governor = new LoopGovernor(config.webhookConcurrency, undefined, busyLagMs);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.sweep(), this.config.sweepIntervalMs);
    this.queue.on('error', (error: Error) => this.logger.warn(`delivery queue: ${redisErrorMessage(error)}`));
    // A job that parked its event has completed: the event may go through at once, if there is room
    // (the account's attempts in flight may all have ended while it was parking). Jobs made before
    // job data named the account leave this to the sweeper.
    this.queue.on('completed', (job: Job<DeliveryJobData>, result: unknown) => {
      if (result === WAITING && job.data.accountId) void this.processor.afterWaiting(job.data.accountId);
    });
    this.queue
      .process(EVERY_JOB_NAME, this.config.webhookConcurrency, (job) => this.deliver(job))
      .catch((error: unknown) => this.logger.error(`delivery worker stopped: ${(error as Error).message}`));
    this.logger.log(`delivering webhooks, ${this.config.webhookConcurrency} at a time`);
  }

  private async deliver(job: Job<DeliveryJobData>): ReturnType<WebhookDeliveryProcessor['process']> {
    this.inFlight += 1;
    try {
      return await this.governor.deliver(job.opts, () => this.processor.process(job));
    } finally {
      this.inFlight -= 1;
    }
  }

  /**
   * SIGTERM, while the HTTP side drains: no new job or sweep from now on; deliveries in flight go
   * on. Returns how many were in flight.
   */
  stopTakingJobs(): number {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sweeper.stop();
    this.governor.releaseAll();
    if (this.stoppedAt === undefined) {
      this.stoppedAt = Date.now();
      // A local pause that does not wait for active jobs; with Redis gone it may never settle.
      this.pausing = this.queue.pause(true, true).catch(() => undefined);
    }
    return this.inFlight;
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
    this.stopTakingJobs();
    await this.sweeping;
    // In-flight deliveries end within WEBHOOK_TIMEOUT_MS of the stop; with Redis gone Bull may
    // never confirm the close, so the wait is bounded from the stop, not from now.
    const waitMs = Math.max(
      CLOSE_MIN_MS,
      (this.stoppedAt ?? Date.now()) + this.config.webhookTimeoutMs + CLOSE_MARGIN_MS - Date.now(),
    );
    const bound = new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref());
    await Promise.race([
      Promise.resolve(this.pausing)
        .then(() => closeDeliveryQueue(this.queue))
        .catch(() => undefined),
      bound,
    ]);
    this.http.close();
  }
}
