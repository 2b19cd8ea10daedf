import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from 'src/common/api-error';
import { parseCommaList } from 'src/common/comma-list';
import { CursorCodec } from 'src/common/cursor';
import { CURSOR_CODEC } from 'src/common/cursor.provider';
import { onReplica } from 'src/database/read-replica';
import { KeysetFilter, KeysetSort, filter, keysetList, parseRanges, whereClauses } from 'src/common/keyset-list';
import type { ListPage } from 'src/common/pagination';
import { SqlParams } from 'src/common/sql-params';
import { type DeliveryJobSource, JOB_SOURCE_COLUMNS, jobSourceFrom } from 'src/webhooks/delivery-job';
import { TestEventStatus, testVerification } from 'src/webhooks/test-event';
import { TestEventLimit } from 'src/webhooks/test-event-limit';
import { WebhookAttempt } from 'src/webhooks/webhook-attempt.entity';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';
import { toWebhookEventDetail, toWebhookEventResponse } from 'src/webhooks/webhook-event.mapper';
import type {
  BulkRedeliverDto,
  ListWebhookEventsQueryDto,
  RedeliveryResponseDto,
  WebhookEventDetailResponseDto,
  WebhookEventResponseDto,
} from 'src/webhooks/webhook-events.dto';
import { WebhookOutboxService } from 'src/webhooks/webhook-outbox.service';

export const MAX_BULK_REDELIVERY = 10_000;

const COLUMNS = `id, account_id AS "accountId", verification_id AS "verificationId", type, body, created_at AS "createdAt",
  delivery_status AS "deliveryStatus", attempt_count AS "attemptCount", cycle, cycle_attempts AS "cycleAttempts",
  last_attempt_at AS "lastAttemptAt", last_response_status AS "lastResponseStatus", last_error AS "lastError",
  next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt"`;

/** The delivery log is newest first, and has no sort parameter. */
const NEWEST_FIRST: KeysetSort<WebhookEvent> = { column: 'created_at', direction: 'DESC', at: (row) => row.createdAt };

/** `delivery_status` given as a comma-separated list: the list route's filter and the bulk replay's. */
function deliveryStatusFilter(raw: string | undefined): KeysetFilter {
  return filter(
    'statuses',
    parseCommaList(raw),
    (statuses, params) => `delivery_status = ANY(${params.add(statuses)}::varchar[])`,
  );
}

/** A fresh delivery cycle: the full schedule again, same id and body; attempt_count keeps counting. */
const NEW_CYCLE = `delivery_status = 'pending', cycle = cycle + 1, cycle_attempts = 0, next_attempt_at = now()`;

/** The client's delivery log: list, detail, replay and test events, always scoped to the account. */
@Injectable()
export class WebhookEventsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CURSOR_CODEC) private readonly cursors: CursorCodec,
    private readonly outbox: WebhookOutboxService,
    private readonly dispatcher: WebhookDispatcher,
    private readonly testEventLimit: TestEventLimit,
  ) {}

  async list(accountId: string, query: ListWebhookEventsQueryDto): Promise<ListPage<WebhookEventResponseDto>> {
    return keysetList<WebhookEvent, WebhookEventResponseDto>(
      this.cursors,
      {
        route: 'webhook-events',
        accountId,
        limit: query.limit,
        cursor: query.cursor,
        table: 'webhook_events',
        columns: COLUMNS,
        filters: [
          deliveryStatusFilter(query.delivery_status),
          filter(
            'verificationId',
            query.verification_id?.toLowerCase(),
            (id, params) => `verification_id = ${params.add(id)}`,
          ),
        ],
        ranges: [{ name: 'created', from: query.created_from, to: query.created_to }],
        sort: NEWEST_FIRST,
        toJson: toWebhookEventResponse,
      },
      (sql, values) => onReplica(this.dataSource, (manager) => manager.query(sql, values)),
    );
  }

  async get(accountId: string, id: string): Promise<WebhookEventDetailResponseDto> {
    return onReplica(this.dataSource, async (manager) => {
      const event = await manager.getRepository(WebhookEvent).findOneBy({ id, accountId });
      if (!event) throw ApiError.notFound('webhook event');
      const attempts = await manager
        .getRepository(WebhookAttempt)
        .find({ where: { eventId: id }, order: { number: 'ASC' } });
      return toWebhookEventDetail(event, attempts);
    });
  }

  async redeliver(accountId: string, id: string): Promise<WebhookEventResponseDto> {
    const [event] = await this.startCycles<WebhookEvent>('id = $1 AND account_id = $2', [id, accountId], COLUMNS);
    if (!event) throw ApiError.notFound('webhook event');
    this.dispatcher.dispatch([event]);
    return toWebhookEventResponse(event);
  }

  /**
   * The queue dashboard's Retry: the same new cycle as the redeliver route, for any account's
   * events (an operator's action). Returns the jobs of the new cycles, for the caller to queue and
   * wait on; ids that match no event are left out.
   */
  async redeliverForOperator(ids: string[]): Promise<DeliveryJobSource[]> {
    return this.startCycles('id = ANY($1::uuid[])', [ids]);
  }

  /** The dashboard's Promote: the pending event's next attempt is due now. */
  async attemptNow(refs: { eventId: string; cycle: number }[]): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhook_events e SET next_attempt_at = now()
         FROM unnest($1::uuid[], $2::integer[]) AS r(id, cycle)
        WHERE e.id = r.id AND e.cycle = r.cycle AND e.delivery_status = 'pending' AND e.next_attempt_at > now()`,
      [refs.map((ref) => ref.eventId), refs.map((ref) => ref.cycle)],
    );
  }

  /** A new cycle for each event matching `where`, read back as the jobs to queue (and `extra` columns). */
  private async startCycles<Extra extends object = object>(
    where: string,
    values: unknown[],
    extra?: string,
  ): Promise<(DeliveryJobSource & Extra)[]> {
    const rows: (DeliveryJobSource & Extra)[] = await this.dataSource.query(
      `WITH e AS (UPDATE webhook_events SET ${NEW_CYCLE} WHERE ${where} RETURNING *)
       SELECT ${JOB_SOURCE_COLUMNS}${extra ? `, ${extra}` : ''} FROM ${jobSourceFrom('e')}`,
      values,
    );
    return rows;
  }

  async redeliverMany(accountId: string, dto: BulkRedeliverDto): Promise<RedeliveryResponseDto> {
    const bounds = parseRanges([{ name: 'created', from: dto.created_from, to: dto.created_to }]);
    const params = new SqlParams();
    const where = whereClauses(params, accountId, [deliveryStatusFilter(dto.delivery_status)], bounds);
    const updated = await this.startCycles(
      `id IN (SELECT id FROM webhook_events WHERE ${where.join(' AND ')}
               ORDER BY created_at, id LIMIT ${params.add(MAX_BULK_REDELIVERY)} FOR UPDATE SKIP LOCKED)`,
      params.values,
    );
    this.dispatcher.dispatch(updated);
    return { object: 'redelivery', count: updated.length };
  }

  async sendTest(accountId: string, status: TestEventStatus): Promise<WebhookEventResponseDto> {
    // Counted before anything is written: a refused test event leaves no row and queues nothing.
    await this.testEventLimit.take(accountId);
    const at = new Date();
    const made = testVerification(status, at);
    const change = {
      accountId,
      verificationId: made.id,
      previousStatus: made.previousStatus,
      verification: made.verification,
      test: true,
    };
    const { event, job } = await this.outbox.record(change, at);
    this.dispatcher.dispatch([job]);
    return toWebhookEventResponse(event);
  }
}
