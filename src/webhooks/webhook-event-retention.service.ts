import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { webhookEventsDeleted } from 'src/webhooks/webhook-metrics';

// `<> 'pending'` rather than IN (…): the partial index webhook_events_retention_idx has this predicate.
const AGED_EVENTS = `delivery_status <> 'pending' AND created_at < now() - make_interval(days => $1)`;

/**
 * The delivery log's retention: delivered and failed events older than a number of days go, with
 * their attempts; a pending one never does (it is still owed to the client).
 */
@Injectable()
export class WebhookEventRetention {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Deletes up to `limit` finished events past the window, oldest first. Rows another transaction
   * holds (a redelivery starting) are skipped; a row that became pending meanwhile is kept.
   */
  async deleteExpired(days: number, limit: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      `WITH aged AS (
         SELECT id FROM webhook_events WHERE ${AGED_EVENTS} ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
       deleted AS (
         DELETE FROM webhook_events e USING aged WHERE e.id = aged.id AND e.delivery_status <> 'pending' RETURNING 1)
       SELECT count(*)::int AS count FROM deleted`,
      [days, limit],
    )) as { count: number }[];
    webhookEventsDeleted.inc(row.count);
    return row.count;
  }

  async countExpired(days: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      `SELECT count(*)::int AS count FROM webhook_events WHERE ${AGED_EVENTS}`,
      [days],
    )) as { count: number }[];
    return row.count;
  }
}
