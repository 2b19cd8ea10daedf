import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import type { DisableReason } from 'src/webhooks/webhook-endpoint.entity';
import { WebhookEndpointHealthRepository } from 'src/webhooks/webhook-endpoint-health.repository';
import { type EndpointState, WebhookEndpointRepository } from 'src/webhooks/webhook-endpoint.repository';
import { WebhookEventRepository } from 'src/webhooks/webhook-event.repository';
import { webhookEndpointDisables } from 'src/webhooks/webhook-metrics';

type Work<T> = (manager: EntityManager, state: EndpointState) => Promise<T>;

/**
 * Disabling and enabling an account's webhook endpoint, for the routes and the delivery worker.
 * Each runs in one transaction that first locks the endpoint row FOR UPDATE, so it serializes with
 * the other and with every statement that holds an event:
 * - disable: the endpoint gets its reason and time (an endpoint already disabled keeps its own), and
 *   the account's pending events become held;
 * - enable: the endpoint is enabled, its held events are released (a fresh cycle each, waiting their
 *   turn), and the oldest are queued: at most WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT of them are due and
 *   not yet attempted at a time, each attempt lets the next one through (`advance`), so they go out
 *   oldest first.
 */
@Injectable()
export class EndpointStates {
  private readonly logger = new Logger('WebhookEndpoints');

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly health: WebhookEndpointHealthRepository,
    private readonly events: WebhookEventRepository,
    private readonly dispatcher: WebhookDispatcher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Disables the endpoint (if enabled); `work` runs first in the same transaction. True when this call disabled it. */
  async disable<T = void>(accountId: string, reason: DisableReason, work?: Work<T>): Promise<boolean> {
    const disabled = await this.dataSource.transaction(async (manager) => {
      const state = await this.endpoints.lock(manager, accountId);
      if (work) await work(manager, state);
      if (state.disabledAt !== null) return false;
      await this.endpoints.set(manager, accountId, { disabledReason: reason, disabledAt: new Date() });
      await this.events.holdPending(manager, accountId);
      return true;
    });
    if (disabled) {
      webhookEndpointDisables.inc({ reason });
      this.logger.warn(`webhook endpoint of account ${accountId} disabled: ${reason}`);
    }
    return disabled;
  }

  /** Enables the endpoint and lets its held events go out, oldest first. */
  async enable(accountId: string): Promise<void> {
    const enabled = await this.dataSource.transaction((manager) => this.enableIn(manager, accountId));
    if (enabled) this.logger.log(`webhook endpoint of account ${accountId} enabled`);
    await this.advance(accountId);
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
    await this.events.releaseHeld(manager, accountId);
    return state.disabledAt !== null;
  }

  /**
   * Lets the account's next released events through, oldest first, as far as the window allows,
   * and queues them. Called after each attempt of an account with waiting events, and by the
   * sweeper for any account that still has some (a worker died between the two).
   */
  async advance(accountId: string): Promise<void> {
    const jobs = await this.events.promoteWaiting(accountId, this.config.webhookMaxInFlightPerAccount);
    this.dispatcher.dispatch(jobs);
  }
}
