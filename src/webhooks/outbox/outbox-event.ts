import { v7 as uuidv7 } from 'uuid';
import { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';

export const STATUS_CHANGED = 'verification.status_changed';
export const VERIFICATION_REDACTED = 'verification.redacted';
export const NO_WEBHOOK_URL = 'no_webhook_url';

export const REDACTION_REASONS = ['client_request', 'retention'] as const;
export type RedactionReason = (typeof REDACTION_REASONS)[number];

interface OutboxChangeBase {
  accountId: string;
  verificationId: string;
  /** The verification as at this change, already in its contract JSON form. */
  verification: { status?: unknown };
}

/** A status change: `verification.status_changed`. */
export interface StatusChange extends OutboxChangeBase {
  previousStatus: string | null;
  /** Test events carry `"test": true` in their payload. */
  test?: boolean;
}

/** An erasure of the verification's personal data: `verification.redacted`. */
export interface Redaction extends OutboxChangeBase {
  reason: RedactionReason;
}

export type OutboxChange = StatusChange | Redaction;

function isRedaction(change: OutboxChange): change is Redaction {
  return 'reason' in change;
}

/**
 * A retention pass redacts by the thousand: its `verification.redacted` events wait their turn
 * (pending with no due time), as released and replayed events do, and go out through the account's
 * share of its window (EndpointLifecycle.advance) instead of each taking a queue job at once.
 */
export function waitsItsTurn(change: OutboxChange): boolean {
  return isRedaction(change) && change.reason === 'retention';
}

/**
 * The outbox event row for a change to an account whose webhook URL is `webhookUrl`, not yet
 * written: every webhook event is built here, with its payload frozen, so a delivery never reads
 * the verification again, and its first status decided (failed without a URL; due now, or waiting
 * its turn; the insert turns it held if the endpoint is disabled). Its row is written by the
 * webhook-event repository's outbox inserts.
 */
export function buildOutboxEvent(change: OutboxChange, webhookUrl: string | null, at: Date = new Date()): WebhookEvent {
  const id = uuidv7();
  const type = isRedaction(change) ? VERIFICATION_REDACTED : STATUS_CHANGED;
  const payload = isRedaction(change)
    ? { id, type, timestamp: at.toISOString(), data: { reason: change.reason, verification: change.verification } }
    : {
        id,
        type,
        timestamp: at.toISOString(),
        ...(change.test ? { test: true } : {}),
        data: { previous_status: change.previousStatus, verification: change.verification },
      };
  const hasUrl = Boolean(webhookUrl);
  return Object.assign(new WebhookEvent(), {
    id,
    accountId: change.accountId,
    verificationId: change.verificationId,
    type,
    body: JSON.stringify(payload),
    createdAt: at,
    deliveryStatus: hasUrl ? 'pending' : 'failed',
    attemptCount: 0,
    cycle: 1,
    cycleAttempts: 0,
    lastAttemptAt: null,
    lastResponseStatus: null,
    lastError: hasUrl ? null : NO_WEBHOOK_URL,
    nextAttemptAt: hasUrl && !waitsItsTurn(change) ? at : null,
    deliveredAt: null,
    redactedAt: null,
  } satisfies WebhookEvent);
}
