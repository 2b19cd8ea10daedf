import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { Queue } from 'bull';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';
import { DISABLE_REASONS } from 'src/webhooks/tables/webhook-endpoint.entity';
import { WebhookEndpointRepository } from 'src/webhooks/tables/webhook-endpoint.repository';
import {
  webhookEndpointsDisabled,
  webhookOutboxBacklog,
  webhookOutboxOldestDue,
  webhookOutboxWaiting,
  webhookQueueDepth,
} from 'src/webhooks/queue/webhook-metrics';
import { DELIVERY_PRODUCER } from 'src/webhooks/queue/webhook-queue.constants';
import { redisErrorMessage } from 'src/redis/redis-errors';

/** The backlog gauges count due and waiting events up to this many each: their query costs the same at a million. */
export const BACKLOG_CAP = 10_000;

/**
 * Keeps the backlog (size and oldest due age), disabled-endpoint and queue-depth gauges fresh (every
 * OUTBOX_SWEEP_INTERVAL_MS) in every process, so each role's /metrics reports them. They are global
 * values, the same in every process: aggregate them with max, not sum.
 */
@Injectable()
export class WebhookGauges implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WebhookGauges.name);
  private timer?: NodeJS.Timeout;
  private updating?: Promise<void>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: WebhookEventRepository,
    private readonly endpoints: WebhookEndpointRepository,
    @Inject(DELIVERY_PRODUCER) private readonly queue: Queue,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.tick(), this.config.sweepIntervalMs);
  }

  private tick(): void {
    if (this.updating) return;
    this.updating = this.update()
      .catch((error: unknown) => this.logger.warn(`webhook gauges not updated: ${redisErrorMessage(error)}`))
      .finally(() => (this.updating = undefined));
  }

  async update(): Promise<void> {
    const backlog = await this.events.backlog(BACKLOG_CAP);
    webhookOutboxBacklog.set(backlog.count);
    webhookOutboxWaiting.set(backlog.waiting);
    webhookOutboxOldestDue.set(backlog.oldestDueSeconds);
    const disabled = await this.endpoints.countDisabled();
    for (const reason of DISABLE_REASONS) webhookEndpointsDisabled.set({ reason }, disabled.get(reason) ?? 0);
    const counts = await this.queue.getJobCounts();
    for (const state of ['waiting', 'active', 'delayed', 'failed'] as const)
      webhookQueueDepth.set({ state }, counts[state]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.updating;
  }
}
