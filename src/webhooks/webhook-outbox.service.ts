import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccountsService } from 'src/accounts/accounts.service';
import type { DeliveryJobSource } from 'src/webhooks/delivery-job';
import { type StatusChange, buildOutboxEvent, outboxJobSource } from 'src/webhooks/outbox-event';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';

/**
 * Writes an outbox event that belongs to no transaction of the caller's (a test event). A status
 * change or a redaction writes its event in its own transaction, with `src/webhooks/outbox-event`.
 */
@Injectable()
export class WebhookOutboxService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
  ) {}

  async record(change: StatusChange, at: Date = new Date()): Promise<{ event: WebhookEvent; job: DeliveryJobSource }> {
    const webhookUrl = await this.accounts.webhookUrl(change.accountId);
    const event = buildOutboxEvent(change, webhookUrl, at);
    await this.dataSource.getRepository(WebhookEvent).insert(event);
    return { event, job: outboxJobSource(change, event, webhookUrl) };
  }
}
