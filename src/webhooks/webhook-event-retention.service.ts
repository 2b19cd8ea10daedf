import { Injectable } from '@nestjs/common';
import { WebhookEventRepository } from 'src/webhooks/webhook-event.repository';
import { webhookEventsDeleted } from 'src/webhooks/webhook-metrics';

/**
 * The delivery log's retention: delivered and failed events older than a number of days go, with
 * their attempts; a pending one never does (it is still owed to the client).
 */
@Injectable()
export class WebhookEventRetention {
  constructor(private readonly events: WebhookEventRepository) {}

  /**
   * Deletes up to `limit` finished events past the window, oldest first. Rows another transaction
   * holds (a redelivery starting) are skipped; a row that became pending meanwhile is kept.
   */
  async deleteExpired(days: number, limit: number): Promise<number> {
    const count = await this.events.deleteFinishedOlderThan(days, limit);
    webhookEventsDeleted.inc(count);
    return count;
  }

  async countExpired(days: number): Promise<number> {
    return this.events.countFinishedOlderThan(days);
  }
}
