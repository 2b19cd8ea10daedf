import { Injectable } from '@nestjs/common';
import { ApiError } from 'src/common/api-error';
import { MicroBatcher } from 'src/common/micro-batcher';
import { isUuid } from 'src/common/uuid';
import type { DeliveryJobData } from 'src/webhooks/queue/delivery-job';
import type { DeliveryJobSource } from 'src/webhooks/tables/event-rows';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { WebhookEventsService } from 'src/webhooks/event-log/webhook-events.service';

/** A Retry's result: the new cycle's job, the refusal of an event whose endpoint is disabled, or nothing (no such event). */
export type Redelivery = DeliveryJobSource | { refused: ApiError } | undefined;

/**
 * The operator's actions on deliveries, as the queue dashboard's buttons do them: Retry is a
 * redelivery (a new cycle with the full schedule, same webhook-id — what the redeliver route does,
 * for any account), Promote makes the next attempt due now. The dashboard's "Retry all" and
 * "Promote all" press the button of each job in one go; the calls made together are batched into
 * one statement and one enqueue.
 */
@Injectable()
export class DashboardDeliveries {
  private readonly redeliveries = new MicroBatcher<string, Redelivery>((ids) => this.redeliverMany(ids));
  private readonly promotions = new MicroBatcher<Pick<DeliveryJobData, 'eventId' | 'cycle'>, void>(async (refs) => {
    await this.events.attemptNow(refs.filter((ref) => isUuid(String(ref.eventId)) && Number.isInteger(ref.cycle)));
    return refs.map(() => undefined);
  });

  constructor(
    private readonly events: WebhookEventsService,
    private readonly deliveryQueue: DeliveryQueue,
  ) {}

  /** The new cycle's job once it is queued; a refusal when the account's endpoint is disabled; undefined when the event no longer exists. */
  redeliver(eventId: string): Promise<Redelivery> {
    return this.redeliveries.submit(eventId);
  }

  attemptNow(ref: Pick<DeliveryJobData, 'eventId' | 'cycle'>): Promise<void> {
    return this.promotions.submit(ref);
  }

  private async redeliverMany(ids: string[]): Promise<Redelivery[]> {
    // Job data can be edited in the dashboard; an id that is not a UUID matches no event.
    const { jobs, disabled } = await this.events.redeliverForOperator([
      ...new Set(ids.filter((id) => isUuid(String(id)))),
    ]);
    await this.deliveryQueue.enqueue(jobs);
    const byId = new Map(jobs.map((job) => [job.id, job]));
    return ids.map((id) => {
      const reason = disabled.get(id);
      return reason ? { refused: ApiError.endpointDisabled(reason) } : byId.get(id);
    });
  }
}
