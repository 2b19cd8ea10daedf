import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { Account } from 'src/accounts/account.entity';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';

export const STATUS_CHANGED = 'verification.status_changed';
export const NO_WEBHOOK_URL = 'no_webhook_url';

export interface StatusChange {
  accountId: string;
  verificationId: string;
  previousStatus: string | null;
  /** The verification as at this change, already in its contract JSON form. */
  verification: object;
  /** Test events carry `"test": true` in their payload. */
  test?: boolean;
}

/**
 * Writes the outbox row inside the caller's transaction; the payload is frozen here, so the
 * delivery never reads the verification again.
 */
@Injectable()
export class WebhookOutboxService {
  async record(manager: EntityManager, change: StatusChange, at: Date = new Date()): Promise<WebhookEvent> {
    const account = await manager.getRepository(Account).findOne({ where: { id: change.accountId }, select: { id: true, webhookUrl: true } });
    const event = this.build(change, account?.webhookUrl ?? null, at);
    await manager.insert(WebhookEvent, event);
    return event;
  }

  /**
   * The outbox row for a change to an account whose webhook URL is `webhookUrl`, not yet written:
   * for a caller that inserts it in a statement of its own, inside its own transaction.
   */
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
}
