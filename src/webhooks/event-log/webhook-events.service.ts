import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { auditEntryCommitted } from 'src/audit/audit-event.repository';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { ApiError } from 'src/common/api-error';
import { CursorCodec } from 'src/common/cursor';
import { CURSOR_CODEC } from 'src/common/cursor.provider';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { CommitSettler } from 'src/database/commit-settler';
import { onReplica } from 'src/database/read-replica';
import { keysetList, parseRanges } from 'src/common/keyset-list';
import type { ListPage } from 'src/common/pagination';
import type { DeliveryJobSource } from 'src/webhooks/tables/event-rows';
import { RedeliveryLimit } from 'src/webhooks/event-log/redelivery-limit';
import { TestEventStatus, testVerification } from 'src/webhooks/outbox/test-event';
import { TestEventLimit } from 'src/webhooks/event-log/test-event-limit';
import { WebhookAttemptRepository } from 'src/webhooks/tables/webhook-attempt.repository';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { maintenanceSlots } from 'src/webhooks/queue/delivery-job';
import { WebhookEndpointRepository } from 'src/webhooks/tables/webhook-endpoint.repository';
import type { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';
import {
  NEWEST_FIRST,
  WebhookEventRepository,
  deliveryLogPageSql,
  deliveryStatusWalk,
  eventCommitted,
  verificationFilter,
} from 'src/webhooks/tables/webhook-event.repository';
import { toWebhookEventDetail, toWebhookEventResponse } from 'src/webhooks/event-log/webhook-event.mapper';
import type {
  BulkRedeliverDto,
  ListWebhookEventsQueryDto,
  RedeliveryResponseDto,
  WebhookEventDetailResponseDto,
  WebhookEventResponseDto,
} from 'src/webhooks/event-log/webhook-events.dto';
import { WebhookOutboxService } from 'src/webhooks/outbox/webhook-outbox.service';

export const MAX_BULK_REDELIVERY = 10_000;

/** The client's delivery log: list, detail, replay and test events, always scoped to the account. */
@Injectable()
export class WebhookEventsService {
  /** How many of an account's replayed events may be due and not yet attempted at once. */
  private readonly window: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: WebhookEventRepository,
    private readonly attempts: WebhookAttemptRepository,
    @Inject(CURSOR_CODEC) private readonly cursors: CursorCodec,
    private readonly outbox: WebhookOutboxService,
    private readonly deliveryQueue: DeliveryQueue,
    private readonly testEventLimit: TestEventLimit,
    private readonly redeliveryLimit: RedeliveryLimit,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly trail: AuditTrail,
    private readonly settler: CommitSettler,
    @Inject(APP_CONFIG) config: Pick<AppConfig, 'webhookMaxInFlightPerAccount'>,
  ) {
    this.window = maintenanceSlots(config.webhookMaxInFlightPerAccount);
  }

  async list(accountId: string, query: ListWebhookEventsQueryDto): Promise<ListPage<WebhookEventResponseDto>> {
    const statuses = deliveryStatusWalk(query.delivery_status);
    return keysetList<WebhookEvent, WebhookEventResponseDto>(
      this.cursors,
      {
        route: 'webhook-events',
        accountId,
        limit: query.limit,
        cursor: query.cursor,
        filters: [statuses.filter, verificationFilter(query.verification_id?.toLowerCase())],
        ranges: [{ name: 'created', from: query.created_from, to: query.created_to }],
        sort: NEWEST_FIRST,
        select: deliveryLogPageSql(statuses),
        toJson: toWebhookEventResponse,
      },
      (sql, values) => this.events.readPage(sql, values),
    );
  }

  async get(accountId: string, id: string): Promise<WebhookEventDetailResponseDto> {
    return onReplica(this.dataSource, async (manager) => {
      const event = await this.events.findForAccount(manager, accountId, id);
      if (!event) throw ApiError.notFound('webhook event');
      return toWebhookEventDetail(event, await this.attempts.ofEvent(manager, id));
    });
  }

  async redeliver(accountId: string, id: string): Promise<WebhookEventResponseDto> {
    const state = await this.endpoints.state(accountId);
    if (state.disabledReason !== null) {
      const event = await this.events.findForAccount(this.dataSource.manager, accountId, id);
      if (!event) throw ApiError.notFound('webhook event');
      throw ApiError.endpointDisabled(state.disabledReason);
    }
    const entryId = uuidv7();
    const [event] = await this.redeliveryLimit.within<DeliveryJobSource & WebhookEvent>(accountId, (count) =>
      this.settler.transaction(
        async (manager) => {
          const started = await this.events.startCycleForAccount(manager, accountId, id);
          await count(started);
          if (started.length > 0) {
            await this.trail.record(manager, {
              id: entryId,
              action: 'webhook_event.redelivered',
              target: { type: 'webhook_event', id },
              accountId,
              changes: ['delivery_status'],
            });
          }
          return started;
        },
        // A lost commit answer is settled by the audit entry written with the new cycle.
        (started) => (started.length > 0 ? auditEntryCommitted(entryId) : null),
      ),
    );
    if (!event) throw ApiError.notFound('webhook event');
    this.deliveryQueue.dispatch([event], 'fresh');
    return toWebhookEventResponse(event);
  }

  async redeliverMany(accountId: string, dto: BulkRedeliverDto): Promise<RedeliveryResponseDto> {
    await this.assertEnabled(accountId);
    const bounds = parseRanges([{ name: 'created', from: dto.created_from, to: dto.created_to }]);
    const entryId = uuidv7();
    // The replayed events wait their turn, as released events do: the first ones, as many as the
    // maintenance lane's share of the account's window lets through, commit due and are queued (in
    // that lane, keeping the rest of the window for the account's fresh changes); each attempt lets
    // the next through.
    let jobs: DeliveryJobSource[] = [];
    const updated = await this.redeliveryLimit.within<{ id: string }>(accountId, (count) =>
      this.settler.transaction(
        async (manager) => {
          const started = await this.events.startWaitingCyclesMatching(
            manager,
            accountId,
            dto.delivery_status,
            bounds,
            MAX_BULK_REDELIVERY,
          );
          await count(started);
          // A call that matched nothing changed nothing, and is not recorded.
          if (started.length > 0) {
            const target = { type: 'account', id: accountId };
            const entry = {
              action: 'webhook_events.bulk_redelivered',
              target,
              accountId,
              changes: ['delivery_status'],
            };
            await this.trail.record(manager, { id: entryId, ...entry });
            ({ jobs } = await this.events.promoteWaiting(manager, [accountId], this.window));
          }
          return started;
        },
        (started) => (started.length > 0 ? auditEntryCommitted(entryId) : null),
      ),
    );
    this.deliveryQueue.dispatch(jobs);
    return { object: 'redelivery', count: updated.length };
  }

  async sendTest(accountId: string, status: TestEventStatus): Promise<WebhookEventResponseDto> {
    // Checked before anything is written: a refused test event leaves no row and queues nothing.
    await this.assertEnabled(accountId);
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
    const { event, job } = await this.settler.transaction(
      async (manager) => {
        const recorded = await this.outbox.record(change, at, manager);
        const target = { type: 'webhook_event', id: recorded.event.id };
        await this.trail.record(manager, { action: 'webhook_event.test_sent', target, accountId, changes: [] });
        return recorded;
      },
      (recorded) => eventCommitted(recorded.event.id),
    );
    this.deliveryQueue.dispatchNew([job]);
    return toWebhookEventResponse(event);
  }

  /** A delivery the client asks for while its endpoint is disabled is refused (409 endpoint_disabled). */
  private async assertEnabled(accountId: string): Promise<void> {
    const state = await this.endpoints.state(accountId);
    if (state.disabledReason !== null) throw ApiError.endpointDisabled(state.disabledReason);
  }
}
