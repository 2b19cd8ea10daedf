import { Injectable, Logger } from '@nestjs/common';
import { AccountsService } from 'src/accounts/accounts.service';
import { iso } from 'src/common/time';
import { EndpointStates } from 'src/webhooks/endpoint-states.service';
import type { UpdateWebhookEndpointDto, WebhookEndpointResponseDto } from 'src/webhooks/webhook-endpoint.dto';
import { WebhookEndpointHealthRepository } from 'src/webhooks/webhook-endpoint-health.repository';
import { WebhookEndpointRepository } from 'src/webhooks/webhook-endpoint.repository';
import { WebhookEventRepository } from 'src/webhooks/webhook-event.repository';

/** Who changes the endpoint: the client through its API, or an operator through the admin API. */
export type EndpointActor = 'client' | 'operator';

/**
 * The account's webhook endpoint as a resource: its URL (the account's `webhook_url`), whether it
 * is enabled, its health and its held events; and the changes a client or an operator makes to it.
 */
@Injectable()
export class WebhookEndpointService {
  private readonly logger = new Logger('WebhookEndpoints');

  constructor(
    private readonly accounts: AccountsService,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly health: WebhookEndpointHealthRepository,
    private readonly events: WebhookEventRepository,
    private readonly states: EndpointStates,
  ) {}

  async view(accountId: string): Promise<WebhookEndpointResponseDto> {
    const [url, state, health, held] = await Promise.all([
      this.accounts.webhookUrl(accountId),
      this.endpoints.state(accountId),
      this.health.of(accountId),
      this.events.countHeld(accountId),
    ]);
    return {
      object: 'webhook_endpoint',
      url,
      status: state.disabledAt === null ? 'enabled' : 'disabled',
      disabled_reason: state.disabledReason,
      disabled_at: iso(state.disabledAt),
      held_count: held,
      health: {
        last_success_at: iso(health.lastSuccessAt),
        last_failure_at: iso(health.lastFailureAt),
        failing_since: iso(health.failingSince),
        consecutive_failures: health.consecutiveFailures,
      },
    };
  }

  /**
   * A new url (any url other than the current one; null only clears it) enables the endpoint and
   * starts its health afresh, in the transaction that sets it; then `status`, when given, enables
   * or disables it (reason: who asked). Enabling releases the held events, oldest first.
   */
  async update(
    accountId: string,
    dto: UpdateWebhookEndpointDto,
    by: EndpointActor,
  ): Promise<WebhookEndpointResponseDto> {
    if (dto.url !== undefined && dto.url !== null) this.accounts.checkUrl(dto.url, 'url');
    if (dto.url !== undefined) await this.changeUrl(accountId, { webhookUrl: dto.url });
    if (dto.status === 'disabled') await this.states.disable(accountId, by);
    if (dto.status === 'enabled') await this.states.enable(accountId);
    return this.view(accountId);
  }

  /** The admin API's account update: a new webhook_url enables the endpoint as `update` does. */
  async changeUrl(accountId: string, changes: { name?: string; webhookUrl?: string | null }) {
    let enabled = false;
    const account = await this.accounts.update(accountId, changes, async (manager, before) => {
      if (changes.webhookUrl === undefined || changes.webhookUrl === null || changes.webhookUrl === before.webhookUrl)
        return;
      enabled = await this.states.enableIn(manager, accountId, { restartHealth: true });
    });
    if (enabled) this.logger.log(`webhook endpoint of account ${accountId} enabled: a new url`);
    if (changes.webhookUrl) await this.states.advance(accountId);
    return account;
  }
}
