import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditTrail } from 'src/audit/audit-trail.service';
import type { AppConfig } from 'src/config/app-config';
import { SYSTEM } from 'src/http/actor';
import { APP_CONFIG } from 'src/config/config.module';
import { BusyRetry } from 'src/webhooks/endpoint/busy-retry';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { maintenanceSlots } from 'src/webhooks/queue/delivery-job';
import type { DisableReason } from 'src/webhooks/tables/webhook-endpoint.entity';
import { WebhookEndpointHealthRepository } from 'src/webhooks/tables/webhook-endpoint-health.repository';
import { type EndpointState, WebhookEndpointRepository } from 'src/webhooks/tables/webhook-endpoint.repository';
import { WebhookEventRepository, anyEventsIn } from 'src/webhooks/tables/webhook-event.repository';
import { webhookEndpointDisables } from 'src/webhooks/queue/webhook-metrics';

/*
 * Glossary of the endpoint's lifecycle (the words of the code, the docs and the delivery log):
 * - cycle: one delivery of an event, its attempts until it is delivered or failed; a redelivery
 *   starts the next cycle (the Bull job's id carries the event's id and its cycle).
 * - held: the account's endpoint is disabled; nothing is sent, the event is never deleted, and it
 *   waits for the endpoint to be enabled.
 * - released: held events of an endpoint being enabled; each starts a fresh cycle, waiting its turn.
 * - waiting its turn: a pending event with no due time (next_attempt_at NULL): released, replayed in
 *   bulk, written by a retention pass, or parked by the worker because its account had the most
 *   deliveries in flight.
 * - advance: let an account's oldest waiting events through, as many as the maintenance lane's
 *   share of its window has room for (`maintenanceSlots` of WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT due
 *   and not yet attempted); the end of each attempt of an account with waiting events advances it.
 */

/** Events released or held per transaction: one batch commits with the change, the rest after it. */
export const SETTLE_BATCH = 1_000;

/** Runs in the disabling transaction after the endpoint's lock; false leaves the endpoint as it is. */
type Work = (manager: EntityManager, state: EndpointState) => Promise<boolean | void>;
/** A disable in a transaction: false when the endpoint was disabled already, 'more' when events are left to hold. */
type Disabled = boolean | 'more';

/**
 * Disabling and enabling an account's webhook endpoint, for the routes and the delivery worker.
 * Each runs in one transaction that first locks the endpoint row FOR UPDATE, so it serializes with
 * the other and with every statement that holds an event:
 * - disable: the endpoint gets its reason and time (an endpoint already disabled keeps its own), and
 *   the account's pending events become held;
 * - enable: the endpoint is enabled, its held events are released (a fresh cycle each, waiting their
 *   turn), and the oldest are queued: at most the maintenance share of
 *   WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT of them are due and not yet attempted at a time, each attempt
 *   lets the next one through (`advance`), so they go out oldest first.
 */
@Injectable()
export class EndpointLifecycle implements BeforeApplicationShutdown {
  private readonly logger = new Logger(EndpointLifecycle.name);
  private readonly busyRetry = new BusyRetry(
    (accountIds) => this.promote(accountIds, true),
    (error) => this.logger.warn(`waiting events wait for the sweep: ${(error as Error).message}`),
  );
  /** Accounts whose release or hold goes on in this process. */
  private readonly settling = new Set<string>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly health: WebhookEndpointHealthRepository,
    private readonly events: WebhookEventRepository,
    private readonly deliveryQueue: DeliveryQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly trail: AuditTrail,
  ) {}

  /**
   * Disables the endpoint (if enabled); `work` runs first in the same transaction (false stops it).
   * True when this call disabled it. Used by the delivery worker (gone, failing): the trail records
   * it as the system's.
   */
  async disable(accountId: string, reason: DisableReason, work?: Work): Promise<boolean> {
    const disabled = await this.dataSource.transaction(async (manager) => {
      const state = await this.endpoints.lock(manager, accountId);
      if (work && (await work(manager, state)) === false) return false;
      const done = await this.disableIn(manager, accountId, reason);
      if (done === false) return false;
      const target = { type: 'account', id: accountId };
      const entry = { action: 'webhook_endpoint.disabled', target, accountId, changes: ['status'], actor: SYSTEM };
      await this.trail.record(manager, entry);
      return done;
    });
    if (disabled !== false) this.disabled(accountId, reason, disabled);
    return disabled !== false;
  }

  /**
   * In the caller's transaction: disables the endpoint if it is enabled, holding the first batch of
   * its pending events. False when it was disabled already, 'more' when pending events are left; the
   * caller passes the answer to `disabled` once committed.
   */
  async disableIn(manager: EntityManager, accountId: string, reason: DisableReason): Promise<Disabled> {
    const state = await this.endpoints.lock(manager, accountId);
    if (state.disabledAt !== null) return false;
    await this.endpoints.set(manager, accountId, { disabledReason: reason, disabledAt: new Date() });
    return (await this.events.settleBatch(manager, accountId, 'held', SETTLE_BATCH)) === SETTLE_BATCH ? 'more' : true;
  }

  /** Logs and counts a committed disable; the rest of the pending events are held in the background. */
  disabled(accountId: string, reason: DisableReason, done: Exclude<Disabled, false>): void {
    webhookEndpointDisables.inc({ reason });
    this.logger.warn(`webhook endpoint of account ${accountId} disabled: ${reason}`);
    if (done === 'more') this.settleInBackground(accountId);
  }

  /** Enables the endpoint and lets its held events go out, oldest first. */
  async enable(accountId: string): Promise<void> {
    const enabled = await this.dataSource.transaction((manager) => this.enableIn(manager, accountId));
    if (enabled) this.logger.log(`webhook endpoint of account ${accountId} enabled`);
    await this.advance(accountId);
  }

  /**
   * After a change committed with a first batch: the account's remaining held events are released
   * (or pending ones held) a batch per transaction, oldest first, in this process; a process that
   * stops meanwhile leaves the rest to the sweeper (`settleBatch` for each `unsettled` account).
   */
  settleInBackground(accountId: string): void {
    if (this.settling.has(accountId)) return;
    this.settling.add(accountId);
    const next = async (): Promise<void> => {
      if ((await this.settleBatch(accountId)) === SETTLE_BATCH)
        return void setImmediate(() => void next().catch(failed));
      this.settling.delete(accountId);
    };
    const failed = (error: unknown) => {
      this.settling.delete(accountId);
      this.logger.warn(
        `endpoint change of account ${accountId} goes on at the next sweep: ${(error as Error).message}`,
      );
    };
    setImmediate(() => void next().catch(failed));
  }

  /** One batch toward the endpoint's state (release if enabled, hold if disabled), then lets released events through. */
  async settleBatch(accountId: string): Promise<number> {
    const [moved, to] = await this.dataSource.transaction(async (manager) => {
      const state = await this.endpoints.lock(manager, accountId);
      const direction = state.disabledAt === null ? 'released' : 'held';
      return [await this.events.settleBatch(manager, accountId, direction, SETTLE_BATCH), direction] as const;
    });
    if (to === 'released' && moved > 0) await this.advance(accountId);
    return moved;
  }

  /** Accounts whose release or hold is still going on, for the sweeper. */
  unsettled(limit: number): Promise<string[]> {
    return this.endpoints.unsettled(anyEventsIn, limit);
  }

  /**
   * In the caller's transaction: enables the endpoint and releases its held events (also when it was
   * enabled already: a held event left by any race goes out too). With `restartHealth` (a new URL),
   * its health starts afresh. True when it was disabled. The caller then calls `advance`.
   */
  async enableIn(manager: EntityManager, accountId: string, { restartHealth = false } = {}): Promise<boolean> {
    const state = await this.endpoints.lock(manager, accountId);
    if (state.disabledAt !== null) {
      await this.endpoints.set(manager, accountId, { disabledReason: null, disabledAt: null });
    }
    if (restartHealth) await this.health.reset(manager, accountId);
    // The first batch commits with the change; the rest follows outside the request (see enableIn's callers).
    if ((await this.events.settleBatch(manager, accountId, 'released', SETTLE_BATCH)) === SETTLE_BATCH) {
      this.settleInBackground(accountId);
    }
    return state.disabledAt !== null;
  }

  /**
   * Lets the account's next released events through, oldest first, as far as the maintenance lane's
   * share of its window allows (the rest is kept for its fresh changes), and queues them, once any
   * promotion of the account under way has committed: after a release or an endpoint change, whose
   * events that promotion may not have seen, and by the sweeper for any account that still has some
   * (a worker died between two attempts).
   */
  async advance(accountId: string): Promise<void> {
    await this.promote([accountId], false);
  }

  /**
   * `advance` without waiting on a promotion of the account under way, which would hold a pooled
   * connection, up to the lock time-out behind a long one: the worker's after each attempt of an
   * account with waiting events, a retention batch's as it commits. An account passed over is tried
   * again after pauses (BusyRetry), so what the promotion under way did not see (this attempt's end,
   * an event parked meanwhile, the batch) is let through after it; past a long one, the account's next
   * attempt or the sweeper does. Without `retry` (an attempt with others of the account in flight in
   * this process), the others' ends try it again.
   */
  async advanceIfFree(accountIds: string[], retry = true): Promise<void> {
    const busy = await this.promote(accountIds, true);
    if (retry) this.busyRetry.schedule(busy);
  }

  /** A stopping process tries no account again (its queue and pool close next; a running sweeper does). */
  beforeApplicationShutdown(): void {
    this.busyRetry.stop();
  }

  /** Promotes the accounts' waiting events and queues them; returns the accounts passed over (`ifFree`). */
  private async promote(accountIds: string[], ifFree: boolean): Promise<string[]> {
    if (accountIds.length === 0) return [];
    const window = maintenanceSlots(this.config.webhookMaxInFlightPerAccount);
    const { jobs, busy } = await this.dataSource.transaction((manager) =>
      this.events.promoteWaiting(manager, accountIds, window, ifFree),
    );
    this.deliveryQueue.requeue(jobs);
    return busy;
  }
}
