import { Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';

@Entity({ name: 'webhook_attempts' })
export class WebhookAttempt {
  @ForeignKey(() => WebhookEvent, { name: 'webhook_attempts_event_id_fkey', onDelete: 'CASCADE' })
  @PrimaryColumn({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @PrimaryColumn({ type: 'integer' })
  number!: number;

  @Column({ type: 'timestamptz', precision: 3 })
  at!: Date;

  @Column({ name: 'response_status', type: 'integer', nullable: true })
  responseStatus!: number | null;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs!: number;

  @Column({ type: 'varchar', length: 500, nullable: true })
  error!: string | null;

  @Column({ name: 'response_body', type: 'varchar', length: 1024, nullable: true })
  responseBody!: string | null;
}
