import type { EntityManager } from 'typeorm';
import { WebhookAttempt } from 'src/webhooks/tables/webhook-attempt.entity';

/** The insert, for the caller's CTE, of one attempt per row of `source` (the rows `recordAttemptsSql` returns). */
export function insertAttemptsFromSql(source: string): string {
  return `INSERT INTO webhook_attempts (event_id, number, at, response_status, duration_ms, error, response_body)
    SELECT id, attempt_count, at, response_status, duration_ms, error, response_body FROM ${source}`;
}

/**
 * The update, for the caller's CTE, that drops the response excerpts of the attempts of the events
 * whose ids are the uuid[] placeholder `eventIds` (a receiver may have echoed the payload).
 */
export function dropResponseExcerptsSql(eventIds: string): string {
  return `UPDATE webhook_attempts SET response_body = NULL WHERE event_id = ANY(${eventIds}::uuid[]) AND response_body IS NOT NULL`;
}

/**
 * Every statement on `webhook_attempts`: the delivery log's read, and the fragments the delivery
 * worker's record statement and the redaction statement compose. Attempts are deleted with their
 * event (ON DELETE CASCADE).
 */
export class WebhookAttemptRepository {
  /** The event's attempts, oldest first, in the caller's read. */
  ofEvent(manager: EntityManager, eventId: string): Promise<WebhookAttempt[]> {
    return manager.getRepository(WebhookAttempt).find({ where: { eventId }, order: { number: 'ASC' } });
  }
}
