import { SecretKeyError } from 'src/accounts/secret-crypto';
import { BLOCKED_ERROR } from 'src/webhooks/delivery/delivery-error';
import type { AttemptOutcome } from 'src/webhooks/delivery/delivery-policy';
import type { AttemptRecord, DueEvent } from 'src/webhooks/delivery/delivery-store';
import type { DeliveryResult } from 'src/webhooks/delivery/webhook-http.client';

/** One delivery attempt as the processor signs, writes and counts it, with its spec in the processor's. */

/** An attempt's error when SECRET_ENCRYPTION_KEY cannot open the account's signing secret. */
export const SIGNING_KEY_ERROR = 'signing secret cannot be decrypted (SECRET_ENCRYPTION_KEY)';

/** The `outcome` label of webhook_delivery_attempts_total. */
export function outcomeLabel(result: DeliveryResult): string {
  if (result.error === null) return 'delivered';
  if (result.error === SIGNING_KEY_ERROR) return 'signing_key_error';
  if (result.error.startsWith('timeout')) return 'timeout';
  if (result.error === BLOCKED_ERROR) return 'blocked';
  return result.responseStatus === null ? 'network_error' : 'http_error';
}

const STATUS_AFTER: Record<AttemptOutcome['kind'], AttemptRecord['status']> = {
  delivered: 'delivered',
  retry: 'pending',
  failed: 'failed',
  held: 'held',
};

/** The attempt's result when the signing secret cannot be opened: nothing was sent. */
export const SIGNING_KEY_FAILURE: DeliveryResult = {
  responseStatus: null,
  error: SIGNING_KEY_ERROR,
  responseBody: null,
  durationMs: 0,
  retryAfter: undefined,
};

/** The attempt's row and the event's new state. */
export function attemptRecord(
  event: DueEvent,
  at: Date,
  result: DeliveryResult,
  outcome: AttemptOutcome,
): AttemptRecord {
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
    url: event.webhookUrl ?? '',
  };
}

/**
 * The event's signing secrets; when SECRET_ENCRYPTION_KEY cannot open one, the attempt's failed
 * result instead (nothing is sent): recorded and retried on the schedule like any failure, so it
 * ends as a failed delivery, never an endless retry, and goes through once the key is fixed.
 */
export function signingSecretsOf(
  event: DueEvent,
  store: { signingSecrets(event: DueEvent): string[] },
  warn: (why: string) => void,
): string[] | DeliveryResult {
  try {
    return store.signingSecrets(event);
  } catch (error) {
    if (!(error instanceof SecretKeyError)) throw error;
    warn(error.message);
    return SIGNING_KEY_FAILURE;
  }
}
