import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Account } from 'src/accounts/account.entity';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'held'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The outbox row: written in the status change's transaction, it is the truth about delivery. */
@Entity({ name: 'webhook_events' })
@Check('webhook_events_delivery_status_check', `delivery_status IN ('pending', 'delivered', 'failed', 'held')`)
@Index('webhook_events_account_created_idx', ['accountId', 'createdAt', 'id'])
@Index('webhook_events_account_status_created_idx', ['accountId', 'deliveryStatus', 'createdAt', 'id'])
@Index('webhook_events_account_verification_idx', ['accountId', 'verificationId', 'createdAt', 'id'])
@Index('webhook_events_due_idx', ['nextAttemptAt'], { where: `delivery_status = 'pending'` })
@Index('webhook_events_waiting_idx', ['accountId', 'createdAt', 'id'], {
  where: `delivery_status = 'pending' AND next_attempt_at IS NULL`,
})
@Index('webhook_events_account_due_order_idx', ['accountId', 'nextAttemptAt', 'id'], {
  where: `delivery_status = 'pending' AND next_attempt_at IS NOT NULL`,
})
@Index('webhook_events_retention_idx', ['createdAt'], { where: `delivery_status <> 'pending'` })
export class WebhookEvent {
  @PrimaryColumn('uuid')
  id!: string;

  @ForeignKey(() => Account, { name: 'webhook_events_account_id_fkey' })
  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @Column({ name: 'verification_id', type: 'uuid' })
  verificationId!: string;

  @Column({ type: 'varchar', length: 64 })
  type!: string;

  /** The exact bytes POSTed, frozen at the change. */
  @Column({ type: 'text' })
  body!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'delivery_status', type: 'varchar', length: 16 })
  deliveryStatus!: DeliveryStatus;

  @Column({ name: 'attempt_count', type: 'integer', default: 0 })
  attemptCount!: number;

  /** Bumped by each redelivery; a job of an older cycle is stale. */
  @Column({ type: 'integer', default: 1 })
  cycle!: number;

  @Column({ name: 'cycle_attempts', type: 'integer', default: 0 })
  cycleAttempts!: number;

  @Column({ name: 'last_attempt_at', type: 'timestamptz', precision: 3, nullable: true })
  lastAttemptAt!: Date | null;

  @Column({ name: 'last_response_status', type: 'integer', nullable: true })
  lastResponseStatus!: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError!: string | null;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', precision: 3, nullable: true })
  nextAttemptAt!: Date | null;

  @Column({ name: 'delivered_at', type: 'timestamptz', precision: 3, nullable: true })
  deliveredAt!: Date | null;

  /** When the verification's redaction rewrote this payload; attempts recorded after it keep no response excerpt. */
  @Column({ name: 'redacted_at', type: 'timestamptz', precision: 3, nullable: true })
  redactedAt!: Date | null;
}
