import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Queue } from 'bull';
import { DataSource } from 'typeorm';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { webhookOutboxBacklog, webhookQueueDepth } from 'src/webhooks/webhook-metrics';
import { DELIVERY_PRODUCER } from 'src/webhooks/webhook-queue.constants';

/**
 * Keeps the backlog and queue-depth gauges fresh (every OUTBOX_SWEEP_INTERVAL_MS) in every process
 * that runs the webhooks feature, so each role's /metrics reports them.
 */
@Injectable()
export class WebhookGauges implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookGauges.name);
  private timer?: NodeJS.Timeout;
  private updating?: Promise<void>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DELIVERY_PRODUCER) private readonly queue: Queue,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), this.config.sweepIntervalMs);
  }

  private tick(): void {
    if (this.updating) return;
    this.updating = this.update()
      .catch((error: unknown) => this.logger.warn(`webhook gauges not updated: ${(error as Error).message}`))
      .finally(() => (this.updating = undefined));
  }

  async update(): Promise<void> {
    const [{ count }] = (await this.dataSource.query(
      `SELECT count(*)::int AS count FROM webhook_events WHERE delivery_status = 'pending' AND next_attempt_at <= now()`,
    )) as { count: number }[];
    webhookOutboxBacklog.set(count);
    const counts = await this.queue.getJobCounts();
    for (const state of ['waiting', 'active', 'delayed', 'failed'] as const)
      webhookQueueDepth.set({ state }, counts[state]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.updating;
  }
}
