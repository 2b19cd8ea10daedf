import { parseJson } from 'src/common/json';
import { iso } from 'src/common/time';
import type { WebhookAttempt } from 'src/webhooks/tables/webhook-attempt.entity';
import type { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';
import type { WebhookEventDetailResponseDto, WebhookEventResponseDto } from 'src/webhooks/event-log/webhook-events.dto';

/** The one place a webhook event becomes the contract's JSON. */
export function toWebhookEventResponse(event: WebhookEvent): WebhookEventResponseDto {
  return {
    id: event.id,
    object: 'webhook_event',
    type: event.type,
    verification_id: event.verificationId,
    created_at: iso(event.createdAt),
    delivery_status: event.deliveryStatus,
    attempt_count: event.attemptCount,
    last_attempt_at: iso(event.lastAttemptAt),
    last_response_status: event.lastResponseStatus,
    last_error: event.lastError,
    next_attempt_at: iso(event.nextAttemptAt),
    payload: parseJson(event.body) as object,
  };
}

export function toWebhookEventDetail(event: WebhookEvent, attempts: WebhookAttempt[]): WebhookEventDetailResponseDto {
  return {
    ...toWebhookEventResponse(event),
    attempts: attempts.map((attempt) => ({
      number: attempt.number,
      at: iso(attempt.at),
      response_status: attempt.responseStatus,
      duration_ms: attempt.durationMs,
      error: attempt.error,
    })),
  };
}
