import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job, Queue } from 'bull';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AccountsService } from 'src/accounts/accounts.service';
import { webhookDeliveries, webhookDeliveryLatency } from 'src/common/metrics';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { AccountSlots } from 'src/webhooks/account-slots';
import { DeliveryRetry } from 'src/webhooks/delivery-retry';
import { deferralDelay, nextRetryDelay, parseRetryAfter } from 'src/webhooks/retry-delay';
import { BLOCKED_ERROR, DeliveryResult, WebhookHttpClient } from 'src/webhooks/webhook-http.client';
import { WebhookAttempt } from 'src/webhooks/webhook-attempt.entity';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';
import { NO_WEBHOOK_URL } from 'src/webhooks/webhook-outbox.service';
import { DELIVERY_QUEUE, DeliveryJobData } from 'src/webhooks/webhook-queue.constants';
import { webhookHeaders } from 'src/webhooks/webhook-signer';

export type DeliveryOutcome = 'skipped' | 'delivered' | 'retry' | 'failed' | 'no_webhook_url';

/** A slot outlives the time-out by this much, so a killed worker's slot frees itself soon after. */
const SLOT_MARGIN_MS = 15_000;
/** A job picked up this much before its event is due waits instead (an early duplicate). */
const EARLY_TOLERANCE_MS = 1_000;

function outcomeLabel(result: DeliveryResult): string {
  if (result.error === null) return 'delivered';
  if (result.error === 'timeout') return 'timeout';
  if (result.error === BLOCKED_ERROR) return 'blocked';
  return result.responseStatus === null ? 'network_error' : 'http_error';
}

/**
 * Delivers one event per job. The event row decides: a job for an event that is gone, no longer
 * pending or of an older delivery cycle does nothing. Every attempt is written before the job ends.
 */
@Injectable()
export class WebhookDeliveryProcessor {
  private readonly logger = new Logger(WebhookDeliveryProcessor.name);
  private readonly http: WebhookHttpClient;
  private slots?: AccountSlots;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
  ) {
    this.http = new WebhookHttpClient({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivateTargets });
  }

  private accountSlots(): AccountSlots {
    this.slots ??= new AccountSlots(
      this.queue.client as unknown as Redis,
      this.config.queuePrefix,
      this.config.webhookMaxInFlightPerAccount,
      this.config.webhookTimeoutMs + SLOT_MARGIN_MS,
    );
    return this.slots;
  }

  async process(job: Job<DeliveryJobData>): Promise<DeliveryOutcome> {
    const { eventId, cycle } = job.data;
    const event = await this.dataSource.getRepository(WebhookEvent).findOneBy({ id: eventId });
    if (!event || event.deliveryStatus !== 'pending' || event.cycle !== cycle) return 'skipped';
    const early = (event.nextAttemptAt?.getTime() ?? 0) - Date.now();
    if (early > EARLY_TOLERANCE_MS) throw new DeliveryRetry(early, 'not due yet');
    const slot = `${job.id}:${randomUUID()}`;
    if (!(await this.accountSlots().acquire(event.accountId, slot))) {
      throw new DeliveryRetry(deferralDelay(job.attemptsMade), 'deferred: account has the most deliveries in flight');
    }
    try {
      return await this.attempt(event);
    } finally {
      await this.accountSlots()
        .release(event.accountId, slot)
        .catch((error: unknown) => this.logger.warn(`could not release a delivery slot: ${(error as Error).message}`));
    }
  }

  private async attempt(event: WebhookEvent): Promise<DeliveryOutcome> {
    const account = await this.accounts.get(event.accountId);
    if (!account.webhookUrl) {
      await this.dataSource.query(
        `UPDATE webhook_events SET delivery_status = 'failed', last_error = $3, next_attempt_at = NULL
          WHERE id = $1 AND cycle = $2 AND delivery_status = 'pending'`,
        [event.id, event.cycle, NO_WEBHOOK_URL],
      );
      webhookDeliveries.inc({ outcome: 'no_webhook_url' });
      return 'no_webhook_url';
    }
    const secrets = await this.accounts.activeSecrets(event.accountId);
    const at = new Date();
    const result = await this.http.post(account.webhookUrl, webhookHeaders(event.id, at, event.body, secrets), event.body);
    webhookDeliveries.inc({ outcome: outcomeLabel(result) });

    const cycleAttempts = event.cycleAttempts + 1;
    const delay =
      result.error === null
        ? null
        : nextRetryDelay({
            schedule: this.config.webhookRetryScheduleMs,
            cycleAttempts,
            responseStatus: result.responseStatus,
            retryAfterMs: parseRetryAfter(result.retryAfter, Date.now()),
          });
    const outcome: DeliveryOutcome = result.error === null ? 'delivered' : delay === null ? 'failed' : 'retry';
    const recorded = await this.record(event, at, result, outcome, delay);
    if (!recorded) return 'skipped';
    if (outcome === 'delivered' && event.cycle === 1) {
      webhookDeliveryLatency.observe((Date.now() - event.createdAt.getTime()) / 1000);
    }
    if (outcome === 'retry' && delay !== null) throw new DeliveryRetry(delay, `attempt failed (${result.error}), retry in ${delay} ms`);
    return outcome;
  }

  /** Writes the attempt and the event's new state; false when the event moved on meanwhile. */
  private async record(event: WebhookEvent, at: Date, result: DeliveryResult, outcome: DeliveryOutcome, delay: number | null): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const rows: { attempt_count: number }[] = await manager.query(
        `UPDATE webhook_events
            SET attempt_count = attempt_count + 1, cycle_attempts = cycle_attempts + 1,
                last_attempt_at = $3, last_response_status = $4, last_error = $5,
                delivery_status = $6::varchar, next_attempt_at = $7, delivered_at = CASE WHEN $6::varchar = 'delivered' THEN now() ELSE delivered_at END
          WHERE id = $1 AND cycle = $2 AND delivery_status = 'pending'
          RETURNING attempt_count`,
        [
          event.id,
          event.cycle,
          at,
          result.responseStatus,
          result.error,
          outcome === 'retry' ? 'pending' : outcome,
          delay === null ? null : new Date(Date.now() + delay),
        ],
      );
      const updated = Array.isArray(rows[0]) ? (rows[0] as { attempt_count: number }[]) : rows;
      if (updated.length === 0) return false;
      await manager.insert(WebhookAttempt, {
        eventId: event.id,
        number: updated[0].attempt_count,
        at,
        responseStatus: result.responseStatus,
        durationMs: result.durationMs,
        error: result.error,
        responseBody: result.responseBody,
      });
      return true;
    });
  }

  close(): void {
    this.http.close();
  }
}
