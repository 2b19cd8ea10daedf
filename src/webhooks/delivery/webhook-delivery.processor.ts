import type { LoggerService } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { AppConfig } from 'src/config/app-config';
import { decideOutcome, jobStep } from 'src/webhooks/delivery/delivery-policy';
import { AttemptWriter } from 'src/webhooks/delivery/attempt-writer';
import { BEHIND_MAINTENANCE, BEHIND_MAINTENANCE_RETRY_MS, slotMember } from 'src/webhooks/delivery/account-concurrency';
import {
  HELD,
  NO_URL_REASON,
  WAITING,
  attemptLogLine,
  attemptResultText,
  failureReason,
  laneOf,
  retryReason,
} from 'src/webhooks/queue/delivery-job';
import {
  SIGNING_KEY_ERROR,
  attemptRecord,
  outcomeLabel,
  signingSecretsOf,
} from 'src/webhooks/delivery/delivery-attempt';
import { DeliveryGaveUp, DeliveryRetry } from 'src/webhooks/queue/delivery-retry';
import type {
  DeliveryJobHandle,
  DeliverySlots,
  DeliveryStorePort,
  EndpointPort,
  PreviousCycles,
  WebhookPoster,
} from 'src/webhooks/delivery/delivery-ports';
import type { DueEvent } from 'src/webhooks/delivery/delivery-store';
import { webhookDeliveries, webhookDeliveryLatency, webhookEventsFailed } from 'src/webhooks/queue/webhook-metrics';
import { webhookHeaders } from 'src/webhooks/outbox/webhook-signer';

export type DeliveryOutcome = 'skipped' | 'delivered' | typeof HELD | typeof WAITING;

/** A job whose event's endpoint was enabled between its load and its hold loads it again this soon. */
const REREAD_MS = 100;

/**
 * Delivers one event per job: load → decide (`jobStep`) → slot → POST → decide (`decideOutcome`) →
 * record. The event row decides, and the job's end mirrors it, so that the queue dashboard tells the
 * truth: a delivered cycle completes, a cycle still retrying throws DeliveryRetry (Bull's backoff
 * reads its `delayMs`, the last error its reason: queue/delivery-retry.ts), and a dead one — schedule
 * used up, or no webhook URL — throws DeliveryGaveUp, which fails the job for good. Every attempt is
 * written to the database before the job ends, and appends a line to the job's log. A job of an
 * older delivery cycle, or for an event that is gone, does nothing. A plain class, wired by
 * WebhookWorkerModule: its spec runs it over fakes of its seams.
 */
export class WebhookDeliveryProcessor {
  private readonly maxAttempts: number;
  private readonly writer: AttemptWriter;
  /** Account → its attempts in flight in this process: the last one's end tries again a promotion passed over. */
  private readonly inFlight = new Map<string, number>();

  constructor(
    private readonly config: Pick<AppConfig, 'webhookRetryScheduleMs' | 'webhookDisableAfterMs'>,
    private readonly store: DeliveryStorePort,
    private readonly http: WebhookPoster,
    private readonly slots: DeliverySlots,
    private readonly previousCycles: PreviousCycles,
    private readonly endpoints: EndpointPort,
    private readonly logger: Pick<LoggerService, 'warn'>,
  ) {
    this.maxAttempts = config.webhookRetryScheduleMs.length + 1;
    this.writer = new AttemptWriter(config, store, endpoints, logger);
  }

  async process(job: DeliveryJobHandle): Promise<DeliveryOutcome> {
    const next = jobStep(await this.store.load(job.data.eventId), job.data.cycle, Date.now());
    switch (next.step) {
      case 'skip':
      case 'delivered':
        return next.step === 'skip' ? 'skipped' : 'delivered';
      case 'give-up':
        if (next.noAttempt) webhookEventsFailed.inc({ reason: 'no_webhook_url' });
        throw new DeliveryGaveUp(failureReason(next.event));
      case 'hold':
        return this.hold(next.event, job);
      case 'not-due':
        throw new DeliveryRetry(next.delayMs, 'not due yet');
    }
    const { event } = next;
    if (next.retirePrevious)
      await this.quietly(
        this.previousCycles.retirePreviousCycle(event.id, event.cycle),
        `retire the previous job of event ${event.id}`,
      );
    const lane = laneOf(job.opts);
    const slot = slotMember(lane, `${job.id}:${randomUUID()}`);
    const acquired = await this.slots.acquire(event.accountId, slot, lane);
    if (acquired === BEHIND_MAINTENANCE) throw new DeliveryRetry(BEHIND_MAINTENANCE_RETRY_MS, BEHIND_MAINTENANCE);
    if (!acquired) return this.park(event, job);
    const account = event.accountId;
    this.inFlight.set(account, (this.inFlight.get(account) ?? 0) + 1);
    try {
      return await this.attempt(event, job);
    } finally {
      const left = (this.inFlight.get(account) ?? 1) - 1;
      if (left > 0) this.inFlight.set(account, left);
      else this.inFlight.delete(account);
      const waiting = await this.slots.release(account, slot).catch((error: unknown) => {
        this.logger.warn(`could not release a delivery slot: ${(error as Error).message}`);
        return false;
      });
      if (event.waiting || waiting) await this.advance(account);
    }
  }

  /**
   * The account has the most deliveries in flight: the event waits its turn in the database (no due
   * time), oldest first, not as a job going round the shared queue; each of the account's attempts
   * lets the next through (`advance`), and so does `afterWaiting`, if its last one ended meanwhile.
   */
  private async park(event: DueEvent, job: DeliveryJobHandle): Promise<DeliveryOutcome> {
    if (!(await this.store.park(event))) return 'skipped';
    await this.log(job, `${WAITING}: the account has the most deliveries in flight`);
    return WAITING;
  }

  /**
   * After a job completed as WAITING: the account's next events through, if a slot is free (else the
   * attempt in flight does as it ends, or the sweeper once a dead worker's slots expire; advancing
   * now would only park them again, in a loop: test/webhooks-dead-slots.e2e-spec.ts).
   */
  async afterWaiting(accountId: string): Promise<void> {
    const room = await this.slots.hasRoom(accountId).catch(() => true);
    if (room) await this.advance(accountId);
  }

  /** The endpoint is disabled: nothing is sent, the event waits for it (unless it was enabled meanwhile). */
  private async hold(event: DueEvent, job: DeliveryJobHandle): Promise<DeliveryOutcome> {
    if (!(await this.store.hold(event))) throw new DeliveryRetry(REREAD_MS, 'endpoint enabled meanwhile');
    await this.log(job, 'endpoint disabled: event held until it is enabled, nothing sent');
    return HELD;
  }

  /** An account passed over is tried again only after its last attempt in flight here (the others' ends do it). */
  private async advance(accountId: string): Promise<void> {
    await this.quietly(
      this.endpoints.advanceIfFree([accountId], !this.inFlight.has(accountId)),
      `let the next events of account ${accountId} through`,
    );
  }

  private async attempt(event: DueEvent, job: DeliveryJobHandle): Promise<DeliveryOutcome> {
    if (!event.webhookUrl) {
      await this.store.failWithoutUrl(event);
      webhookDeliveries.inc({ outcome: 'no_webhook_url' });
      webhookEventsFailed.inc({ reason: 'no_webhook_url' });
      await this.log(job, NO_URL_REASON);
      throw new DeliveryGaveUp(NO_URL_REASON);
    }
    const at = new Date();
    const secrets = signingSecretsOf(event, this.store, (why) =>
      this.logger.warn(`event ${event.id} of account ${event.accountId} not sent: its signing secret: ${why}`),
    );
    const result = Array.isArray(secrets)
      ? await this.http.post(event.webhookUrl, webhookHeaders(event.id, at, event.body, secrets), event.body)
      : secrets;
    webhookDeliveries.inc({ outcome: outcomeLabel(result) });

    const number = event.cycleAttempts + 1;
    const outcome = decideOutcome({
      result,
      cycleAttempts: number,
      schedule: this.config.webhookRetryScheduleMs,
      now: new Date(),
    });
    const record = attemptRecord(event, at, result, outcome);
    const [recorded] = await Promise.all([
      this.writer.write(record, outcome, event.accountId),
      this.log(job, attemptLogLine(number, this.maxAttempts, result, outcome)),
    ]);
    if (recorded === 'moved')
      throw new DeliveryRetry(0, `${attemptResultText(result)} from a url the account has left`);
    // The endpoint was disabled while the attempt was in flight: the attempt is logged, and the event
    // waits held for the endpoint (neither a retry nor a dead delivery), unless the attempt delivered it.
    if (outcome.kind === 'held' || recorded === 'held') return HELD;
    if (!recorded) return 'skipped';
    // A secret the service cannot decrypt is its own fault, not the endpoint's: it never disables one.
    if (outcome.kind === 'failed' && result.error !== SIGNING_KEY_ERROR)
      await this.writer.disableIfFailingTooLong(event.accountId);
    if (outcome.kind === 'delivered' && event.cycle === 1) {
      webhookDeliveryLatency.observe((Date.now() - event.createdAt.getTime()) / 1000);
    }
    const error = attemptResultText(result);
    if (outcome.kind === 'retry') {
      throw new DeliveryRetry(outcome.delayMs, retryReason(number, this.maxAttempts, error, outcome.delayMs));
    }
    if (outcome.kind === 'failed') {
      webhookEventsFailed.inc({ reason: 'schedule_exhausted' });
      throw new DeliveryGaveUp(failureReason({ cycleAttempts: number, lastError: error }));
    }
    return 'delivered';
  }

  /** The job log is the dashboard's view of the attempts; the database keeps the record, so a lost line is only logged. */
  private async log(job: DeliveryJobHandle, line: string): Promise<void> {
    await this.quietly(job.log(line), `add to the log of job ${job.id}`);
  }

  /** Best effort: a failure is logged, and is never the job's. */
  private async quietly(work: Promise<unknown>, what: string): Promise<void> {
    await work.then(
      () => undefined,
      (error: unknown) => this.logger.warn(`could not ${what}: ${(error as Error).message}`),
    );
  }
}
