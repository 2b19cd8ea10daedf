import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { AccountsService } from 'src/accounts/accounts.service';
import type { SqlParams } from 'src/common/sql-params';
import type { DeliveryJobSource } from 'src/webhooks/delivery-job';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';

export const STATUS_CHANGED = 'verification.status_changed';
export const NO_WEBHOOK_URL = 'no_webhook_url';

export interface StatusChange {
  accountId: string;
  verificationId: string;
  previousStatus: string | null;
  /** The verification as at this change, already in its contract JSON form. */
  verification: { status?: unknown };
  /** Test events carry `"test": true` in their payload. */
  test?: boolean;
}

/**
 * The outbox: every webhook event row is built here, with its payload frozen, so a delivery never
 * reads the verification again. A status change writes its event in its own transaction through
 * `insertFrom`; a test event is written on its own by `record`.
 */
@Injectable()
export class WebhookOutboxService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
  ) {}

  /** Builds and writes the event of a change that belongs to no transaction of the caller's. */
  async record(change: StatusChange, at: Date = new Date()): Promise<{ event: WebhookEvent; job: DeliveryJobSource }> {
    const webhookUrl = await this.accounts.webhookUrl(change.accountId);
    const event = this.build(change, webhookUrl, at);
    await this.dataSource.getRepository(WebhookEvent).insert(event);
    return { event, job: this.jobSource(change, event, webhookUrl) };
  }

  /** What the queue needs of an event just built, taken from its change (the body is not parsed back). */
  jobSource(change: StatusChange, event: WebhookEvent, webhookUrl: string | null): DeliveryJobSource {
    const { status } = change.verification;
    return {
      id: event.id,
      cycle: event.cycle,
      type: event.type,
      accountId: event.accountId,
      verificationId: event.verificationId,
      test: change.test === true,
      previousStatus: change.previousStatus,
      status: typeof status === 'string' ? status : null,
      webhookUrl,
    };
  }

  /** The event row for a change to an account whose webhook URL is `webhookUrl`, not yet written. */
  build(change: StatusChange, webhookUrl: string | null, at: Date = new Date()): WebhookEvent {
    const id = uuidv7();
    const payload = {
      id,
      type: STATUS_CHANGED,
      timestamp: at.toISOString(),
      ...(change.test ? { test: true } : {}),
      data: { previous_status: change.previousStatus, verification: change.verification },
    };
    const hasUrl = Boolean(webhookUrl);
    return Object.assign(new WebhookEvent(), {
      id,
      accountId: change.accountId,
      verificationId: change.verificationId,
      type: STATUS_CHANGED,
      body: JSON.stringify(payload),
      createdAt: at,
      deliveryStatus: hasUrl ? 'pending' : 'failed',
      attemptCount: 0,
      cycle: 1,
      cycleAttempts: 0,
      lastAttemptAt: null,
      lastResponseStatus: null,
      lastError: hasUrl ? null : NO_WEBHOOK_URL,
      nextAttemptAt: hasUrl ? at : null,
      deliveredAt: null,
    } satisfies WebhookEvent);
  }

  /**
   * `INSERT INTO webhook_events … SELECT … FROM <source>` for a built event: a statement for the
   * caller's CTE that writes the event once per row of `source`, so it commits with the change
   * that produced it, in the same round trip, or not at all.
   */
  insertFrom(source: string, event: WebhookEvent, params: SqlParams): string {
    const values = [
      `${params.add(event.id)}::uuid`,
      `${params.add(event.accountId)}::uuid`,
      `${params.add(event.verificationId)}::uuid`,
      `${params.add(event.type)}::varchar`,
      `${params.add(event.body)}::text`,
      `${params.add(event.createdAt)}::timestamptz`,
      `${params.add(event.deliveryStatus)}::varchar`,
      `${params.add(event.lastError)}::varchar`,
      `${params.add(event.nextAttemptAt)}::timestamptz`,
    ];
    return `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, last_error, next_attempt_at)
      SELECT ${values.join(', ')} FROM ${source}`;
  }
}
