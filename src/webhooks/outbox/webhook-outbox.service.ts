import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AccountsService } from 'src/accounts/accounts.service';
import { type DeliveryJobSource, deliveryJobSource } from 'src/webhooks/tables/event-rows';
import { type StatusChange, buildOutboxEvent } from 'src/webhooks/outbox/outbox-event';
import type { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';

/**
 * Writes an outbox event that belongs to no transaction of the caller's (a test event). A status
 * change or a redaction writes its event in its own statement, with the repository's outbox inserts.
 */
@Injectable()
export class WebhookOutboxService {
  constructor(
    private readonly events: WebhookEventRepository,
    private readonly accounts: AccountsService,
  ) {}

  async record(
    change: StatusChange,
    at: Date,
    manager: EntityManager,
  ): Promise<{ event: WebhookEvent; job: DeliveryJobSource }> {
    const webhookUrl = await this.accounts.webhookUrl(change.accountId);
    const event = buildOutboxEvent(change, webhookUrl, at);
    await this.events.insert(event, manager);
    return { event, job: deliveryJobSource({ ...event, webhookUrl }) };
  }
}
