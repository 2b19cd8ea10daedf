import { Injectable } from '@nestjs/common';
import { ApiError } from 'src/common/api-error';
import { MicroBatcher } from 'src/common/micro-batcher';
import { isUuid } from 'src/common/uuid';
import { CommitSettler } from 'src/database/commit-settler';
import type { DeliveryJobData } from 'src/webhooks/queue/delivery-job';
import type { DeliveryJobSource } from 'src/webhooks/tables/event-rows';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { WebhookEventRepository, eventCommitted, promoteHolds } from 'src/webhooks/tables/webhook-event.repository';

/** A Retry's result: the new cycle's job, the refusal of an event whose endpoint is disabled, or nothing (no such event). */
export type Redelivery = DeliveryJobSource | { refused: ApiError } | undefined;

type JobRef = Pick<DeliveryJobData, 'eventId' | 'cycle'>;

/**
 * The operator's actions on deliveries, as the queue dashboard's buttons do them, for any account's
 * events: Retry is a redelivery (a new cycle with the full schedule, same webhook-id — what the
 * redeliver route does), Promote makes the next attempt due now. The dashboard's "Retry all" and
 * "Promote all" press the button of each job in one go; the calls made together are batched into
 * one statement and one enqueue. A lost commit answer is settled (CommitSettler), so a button
 * answers as it went.
 */
@Injectable()
export class DashboardDeliveries {
  private readonly redeliveries = new MicroBatcher<string, Redelivery>((ids) => this.redeliverMany(ids));
  private readonly promotions = new MicroBatcher<JobRef, void>(async (refs) => {
    await this.attemptNowMany(refs.filter((ref) => isUuid(String(ref.eventId)) && Number.isInteger(ref.cycle)));
    return refs.map(() => undefined);
  });

  constructor(
    private readonly events: WebhookEventRepository,
    private readonly settler: CommitSettler,
    private readonly deliveryQueue: DeliveryQueue,
  ) {}

  /** The new cycle's job once it is queued; a refusal when the account's endpoint is disabled; undefined when the event no longer exists. */
  redeliver(eventId: string): Promise<Redelivery> {
    return this.redeliveries.submit(eventId);
  }

  attemptNow(ref: JobRef): Promise<void> {
    return this.promotions.submit(ref);
  }

  private async redeliverMany(ids: string[]): Promise<Redelivery[]> {
    // Job data can be edited in the dashboard; an id that is not a UUID matches no event.
    const uuids = [...new Set(ids.filter((id) => isUuid(String(id))))];
    // Settled by the first new cycle (a Retry answered 503 would be pressed again).
    const jobs = await this.settler.transaction(
      (manager) => this.events.startCyclesOf(manager, uuids),
      (started) => (started.length > 0 ? eventCommitted(started[0].id, started[0].cycle) : null),
    );
    const byId = new Map(jobs.map((job) => [job.id, job]));
    const disabled = await this.events.withDisabledEndpoint(uuids.filter((id) => !byId.has(id)));
    await this.deliveryQueue.enqueue(jobs);
    return ids.map((id) => {
      const reason = disabled.get(id);
      return reason ? { refused: ApiError.endpointDisabled(reason) } : byId.get(id);
    });
  }

  /** Settled by the first event: due now (or its cycle over), the Promote holds whether it committed or not. */
  private async attemptNowMany(refs: JobRef[]): Promise<void> {
    if (refs.length === 0) return;
    await this.settler.transaction(
      (manager) => this.events.setDue(refs, 'now', manager),
      () => promoteHolds(refs[0].eventId, refs[0].cycle),
    );
  }
}
