import type { LoggerService } from '@nestjs/common';
import type { Job } from 'bull';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from 'src/config/app-config';
import type { AccountSlots } from 'src/webhooks/account-slots';
import { type AttemptOutcome, decideOutcome } from 'src/webhooks/decide-outcome';
import { DeliveryRetry } from 'src/webhooks/delivery-retry';
import type { AttemptRecord, DeliveryStore, DueEvent } from 'src/webhooks/delivery-store';
import { deferralDelay } from 'src/webhooks/retry-delay';
import { BLOCKED_ERROR, type DeliveryResult, type WebhookHttpClient } from 'src/webhooks/webhook-http.client';
import { webhookDeliveries, webhookDeliveryLatency } from 'src/webhooks/webhook-metrics';
import type { DeliveryJobData } from 'src/webhooks/webhook-queue.constants';
import { webhookHeaders } from 'src/webhooks/webhook-signer';

export type DeliveryOutcome = 'skipped' | 'delivered' | 'retry' | 'failed' | 'no_webhook_url';

/** A job picked up this much before its event is due waits instead (an early duplicate). */
const EARLY_TOLERANCE_MS = 1_000;

/** The seams the processor works through; the spec gives it fakes of them. */
export type DeliveryStorePort = Pick<
  DeliveryStore,
  'load' | 'record' | 'recordUntilStored' | 'signingSecrets' | 'failWithoutUrl'
>;
export type WebhookPoster = Pick<WebhookHttpClient, 'post'>;
export type DeliverySlots = Pick<AccountSlots, 'acquire' | 'release'>;

function outcomeLabel(result: DeliveryResult): string {
  if (result.error === null) return 'delivered';
  if (result.error === 'timeout') return 'timeout';
  if (result.error === BLOCKED_ERROR) return 'blocked';
  return result.responseStatus === null ? 'network_error' : 'http_error';
}

const STATUS_AFTER: Record<AttemptOutcome['kind'], AttemptRecord['status']> = {
  delivered: 'delivered',
  retry: 'pending',
  failed: 'failed',
};

function attemptRecord(event: DueEvent, at: Date, result: DeliveryResult, outcome: AttemptOutcome): AttemptRecord {
  return {
    eventId: event.id,
    cycle: event.cycle,
    at,
    responseStatus: result.responseStatus,
    error: result.error,
    status: STATUS_AFTER[outcome.kind],
    nextAttemptAt: outcome.kind === 'retry' ? outcome.at : null,
    durationMs: result.durationMs,
    responseBody: result.responseBody,
  };
}

/**
 * Delivers one event per job: load → (due? slot?) → POST → decide → record. The event row decides:
 * a job for an event that is gone, no longer pending or of an older delivery cycle does nothing,
 * and every attempt is written before the job ends. A retry is Bull's: the job throws DeliveryRetry
 * with the delay, and the queue's backoff strategy reads it.
 *
 * A plain class, wired by WebhookWorkerModule: its spec runs it over fakes of its seams.
 */
export class WebhookDeliveryProcessor {
  constructor(
    private readonly config: Pick<AppConfig, 'webhookRetryScheduleMs'>,
    private readonly store: DeliveryStorePort,
    private readonly http: WebhookPoster,
    private readonly slots: DeliverySlots,
    private readonly logger: Pick<LoggerService, 'warn'>,
  ) {}

  async process(job: Job<DeliveryJobData>): Promise<DeliveryOutcome> {
    const { eventId, cycle } = job.data;
    const event = await this.store.load(eventId);
    if (!event || event.deliveryStatus !== 'pending' || event.cycle !== cycle) return 'skipped';
    const early = (event.nextAttemptAt?.getTime() ?? 0) - Date.now();
    if (early > EARLY_TOLERANCE_MS) throw new DeliveryRetry(early, 'not due yet');
    const slot = `${job.id}:${randomUUID()}`;
    if (!(await this.slots.acquire(event.accountId, slot))) {
      throw new DeliveryRetry(deferralDelay(job.attemptsMade), 'deferred: account has the most deliveries in flight');
    }
    try {
      return await this.attempt(event);
    } finally {
      await this.slots
        .release(event.accountId, slot)
        .catch((error: unknown) => this.logger.warn(`could not release a delivery slot: ${(error as Error).message}`));
    }
  }

  private async attempt(event: DueEvent): Promise<DeliveryOutcome> {
    if (!event.webhookUrl) {
      await this.store.failWithoutUrl(event);
      webhookDeliveries.inc({ outcome: 'no_webhook_url' });
      return 'no_webhook_url';
    }
    const at = new Date();
    const headers = webhookHeaders(event.id, at, event.body, this.store.signingSecrets(event));
    const result = await this.http.post(event.webhookUrl, headers, event.body);
    webhookDeliveries.inc({ outcome: outcomeLabel(result) });

    const outcome = decideOutcome({
      result,
      cycleAttempts: event.cycleAttempts + 1,
      schedule: this.config.webhookRetryScheduleMs,
      now: new Date(),
    });
    const record = attemptRecord(event, at, result, outcome);
    const recorded =
      outcome.kind === 'delivered' ? await this.store.recordUntilStored(record) : await this.store.record(record);
    if (!recorded) return 'skipped';
    if (outcome.kind === 'delivered' && event.cycle === 1) {
      webhookDeliveryLatency.observe((Date.now() - event.createdAt.getTime()) / 1000);
    }
    if (outcome.kind === 'retry')
      throw new DeliveryRetry(outcome.delayMs, `attempt failed (${result.error}), retry in ${outcome.delayMs} ms`);
    return outcome.kind;
  }
}
