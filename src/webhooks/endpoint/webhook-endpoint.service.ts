import { Injectable, Logger } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { AccountsService } from 'src/accounts/accounts.service';
import { auditEntryCommitted } from 'src/audit/audit-event.repository';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { iso } from 'src/common/time';
import { EndpointLifecycle } from 'src/webhooks/endpoint/endpoint-lifecycle.service';
import type { UpdateWebhookEndpointDto, WebhookEndpointResponseDto } from 'src/webhooks/endpoint/webhook-endpoint.dto';
import { WebhookEndpointHealthRepository } from 'src/webhooks/tables/webhook-endpoint-health.repository';
import { WebhookEndpointRepository } from 'src/webhooks/tables/webhook-endpoint.repository';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';

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
    private readonly states: EndpointLifecycle,
    private readonly trail: AuditTrail,
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
   * One transaction: a new url (any url other than the current one; null only clears it) enables
   * the endpoint and starts its health afresh; then `status`, when given, enables or disables it
   * (reason: who asked); the trail's entry names the fields given. Enabling releases the held
   * events, oldest first.
   */
  async update(
    accountId: string,
    dto: UpdateWebhookEndpointDto,
    by: EndpointActor,
  ): Promise<WebhookEndpointResponseDto> {
    if (dto.url !== undefined && dto.url !== null) this.accounts.checkUrl(dto.url, 'url');
    const changes = ENDPOINT_FIELDS.filter((field) => dto[field] !== undefined);
    let enabled = false;
    let disabled: boolean | 'more' = false;
    const entryId = uuidv7();
    await this.accounts.update(
      accountId,
      dto.url === undefined ? {} : { webhookUrl: dto.url },
      async (manager, previousUrl) => {
        if (isNewUrl(dto.url, previousUrl))
          enabled = await this.states.enableIn(manager, accountId, { restartHealth: true });
        if (dto.status === 'enabled') enabled = (await this.states.enableIn(manager, accountId)) || enabled;
        if (dto.status === 'disabled') disabled = await this.states.disableIn(manager, accountId, by);
        const target = { type: 'account', id: accountId };
        await this.trail.record(manager, {
          id: entryId,
          action: 'webhook_endpoint.updated',
          target,
          accountId,
          changes,
        });
      },
      auditEntryCommitted(entryId),
    );
    if (disabled !== false) this.states.disabled(accountId, by, disabled);
    else if (enabled) this.logger.log(`webhook endpoint of account ${accountId} enabled`);
    if (!disabled && (dto.url || dto.status === 'enabled')) await this.states.advance(accountId);
    return this.view(accountId);
  }

  /** The admin API's account update (`account.updated`): a new webhook_url enables the endpoint as `update` does. */
  async changeUrl(accountId: string, changes: { name?: string; webhookUrl?: string | null }) {
    let enabled = false;
    const entryId = uuidv7();
    const account = await this.accounts.update(
      accountId,
      changes,
      async (manager, previousUrl) => {
        if (isNewUrl(changes.webhookUrl, previousUrl))
          enabled = await this.states.enableIn(manager, accountId, { restartHealth: true });
        const fields = [
          ...(changes.name !== undefined ? ['name'] : []),
          ...(changes.webhookUrl !== undefined ? ['webhook_url'] : []),
        ];
        const target = { type: 'account', id: accountId };
        await this.trail.record(manager, {
          id: entryId,
          action: 'account.updated',
          target,
          accountId,
          changes: fields,
        });
      },
      auditEntryCommitted(entryId),
    );
    if (enabled) this.logger.log(`webhook endpoint of account ${accountId} enabled: a new url`);
    if (changes.webhookUrl) await this.states.advance(accountId);
    return account;
  }
}

const ENDPOINT_FIELDS = ['url', 'status'] as const;

function isNewUrl(url: string | null | undefined, current: string | null): url is string {
  return url !== undefined && url !== null && url !== current;
}
