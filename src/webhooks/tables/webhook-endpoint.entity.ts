import { Check, Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { Account } from 'src/accounts/account.entity';

export const DISABLE_REASONS = ['gone', 'failing', 'client', 'operator'] as const;
export type DisableReason = (typeof DISABLE_REASONS)[number];

/**
 * Whether the account's webhook endpoint (its `webhook_url`) is sent to. A row exists once the
 * endpoint was disabled or enabled at least once; no row reads as enabled. The row is the lock of
 * the held/released protocol: an event becomes `held` only by a statement that locked the row and
 * saw it disabled, and enabling locks it FOR UPDATE before it releases the held events.
 */
@Entity({ name: 'webhook_endpoints' })
@Check('webhook_endpoints_disabled_check', `(disabled_reason IS NULL) = (disabled_at IS NULL)`)
@Check('webhook_endpoints_disabled_reason_check', `disabled_reason IN ('gone', 'failing', 'client', 'operator')`)
export class WebhookEndpoint {
  @PrimaryColumn('uuid', { name: 'account_id' })
  @ForeignKey(() => Account, { name: 'webhook_endpoints_account_id_fkey' })
  accountId!: string;

  @Column({ name: 'disabled_reason', type: 'varchar', length: 16, nullable: true })
  disabledReason!: DisableReason | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', precision: 3, nullable: true })
  disabledAt!: Date | null;
}

/**
 * The endpoint's health, kept by every recorded delivery attempt. A table of its own, apart from the
 * endpoint's state, so that the attempts' writes never wait on (or deadlock with) the FOR UPDATE
 * lock that disabling and enabling take on `webhook_endpoints`.
 */
@Entity({ name: 'webhook_endpoint_health' })
export class WebhookEndpointHealth {
  @PrimaryColumn('uuid', { name: 'account_id' })
  @ForeignKey(() => Account, { name: 'webhook_endpoint_health_account_id_fkey' })
  accountId!: string;

  @Column({ name: 'last_success_at', type: 'timestamptz', precision: 3, nullable: true })
  lastSuccessAt!: Date | null;

  @Column({ name: 'last_failure_at', type: 'timestamptz', precision: 3, nullable: true })
  lastFailureAt!: Date | null;

  /** The first failed attempt after the last success; null once an attempt succeeds. */
  @Column({ name: 'failing_since', type: 'timestamptz', precision: 3, nullable: true })
  failingSince!: Date | null;

  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 })
  consecutiveFailures!: number;
}
