import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Matches } from 'class-validator';
import { commaListOf } from 'src/common/comma-list';
import { PageCursor, PageLimit, TimestampBound } from 'src/common/list-query.decorators';
import { DELIVERY_STATUSES, type DeliveryStatus } from 'src/webhooks/tables/webhook-event.entity';
import {
  REDACTION_REASONS,
  STATUS_CHANGED,
  VERIFICATION_REDACTED,
  type RedactionReason,
} from 'src/webhooks/outbox/outbox-event';
import { TEST_EVENT_STATUSES, type TestEventStatus } from 'src/webhooks/outbox/test-event';

/** `pending` is not among them: those events are still being delivered. */
const REDELIVERABLE_STATUSES = ['failed', 'delivered'] as const satisfies readonly DeliveryStatus[];
const DELIVERY_STATUS_LIST = commaListOf(DELIVERY_STATUSES);
const REDELIVERABLE_LIST = commaListOf(REDELIVERABLE_STATUSES);

export class ListWebhookEventsQueryDto {
  @ApiPropertyOptional({
    description: 'Comma-separated delivery statuses',
    pattern: DELIVERY_STATUS_LIST.source,
    example: 'failed',
  })
  @IsOptional()
  @IsString()
  @Matches(DELIVERY_STATUS_LIST, {
    message: `delivery_status must be a comma-separated list of ${DELIVERY_STATUSES.join(', ')}`,
  })
  delivery_status?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all')
  verification_id?: string;

  @TimestampBound('Inclusive')
  created_from?: string;

  @TimestampBound('Exclusive')
  created_to?: string;

  @PageLimit()
  limit?: string;

  @PageCursor()
  cursor?: string;
}

export class StreamWebhookEventsQueryDto {
  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Replay every event created after this one first (as the Last-Event-ID header does; not both)',
  })
  @IsOptional()
  @IsUUID('all', { message: 'since must be a UUID' })
  since?: string;
}

export class BulkRedeliverDto {
  @ApiProperty({
    example: 'failed',
    pattern: REDELIVERABLE_LIST.source,
    description:
      'Comma-separated: `failed`, `delivered`, or both. `pending` is refused: those events are still being ' +
      'delivered, and replaying them would restart their retry schedule. At most 10,000 events per call, oldest ' +
      'first; call again for the rest.',
  })
  @IsString()
  @Matches(REDELIVERABLE_LIST, {
    message: `delivery_status must be a comma-separated list of ${REDELIVERABLE_STATUSES.join(', ')}`,
  })
  delivery_status!: string;

  @TimestampBound('Inclusive')
  created_from?: string;

  @TimestampBound('Exclusive')
  created_to?: string;
}

export class SendTestEventDto {
  @ApiProperty({ enum: TEST_EVENT_STATUSES, description: 'The status of the made-up verification in the test payload' })
  @IsIn(TEST_EVENT_STATUSES)
  status!: TestEventStatus;
}

export class WebhookAttemptResponseDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) number!: number;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({ nullable: true, type: 'integer', description: 'null on a network error or time-out' })
  response_status!: number | null;
  @ApiProperty({ type: 'integer', minimum: 0 }) duration_ms!: number;
  @ApiProperty({ nullable: true, type: String, description: 'null on success' }) error!: string | null;
}

/** The verification as at the change; its schema is the verifications feature's response. */
const VERIFICATION_SCHEMA = { allOf: [{ $ref: getSchemaPath('VerificationResponseDto') }] };

export class StatusChangedDataDto {
  @ApiProperty({ enum: TEST_EVENT_STATUSES }) previous_status!: TestEventStatus;
  @ApiProperty(VERIFICATION_SCHEMA) verification!: Record<string, unknown>;
}

/** The body of a `verification.status_changed` webhook (and of a test event, with `test: true`). */
export class StatusChangedPayloadDto {
  @ApiProperty({ format: 'uuid', description: 'The event id, also the webhook-id header' }) id!: string;
  @ApiProperty({ enum: [STATUS_CHANGED] }) type!: typeof STATUS_CHANGED;
  @ApiProperty({ format: 'date-time' }) timestamp!: string;
  @ApiPropertyOptional({ enum: [true], description: 'Present, and true, on test events only' }) test?: true;
  @ApiProperty({ type: StatusChangedDataDto }) data!: StatusChangedDataDto;
}

export class RedactedDataDto {
  @ApiProperty({ enum: REDACTION_REASONS }) reason!: RedactionReason;
  @ApiProperty(VERIFICATION_SCHEMA) verification!: Record<string, unknown>;
}

/** The body of a `verification.redacted` webhook. */
export class RedactedPayloadDto {
  @ApiProperty({ format: 'uuid', description: 'The event id, also the webhook-id header' }) id!: string;
  @ApiProperty({ enum: [VERIFICATION_REDACTED] }) type!: typeof VERIFICATION_REDACTED;
  @ApiProperty({ format: 'date-time' }) timestamp!: string;
  @ApiProperty({ type: RedactedDataDto }) data!: RedactedDataDto;
}

export class WebhookEventResponseDto {
  @ApiProperty({ format: 'uuid', description: 'Also the webhook-id header of every attempt' }) id!: string;
  @ApiProperty({ enum: ['webhook_event'] }) object!: 'webhook_event';
  @ApiProperty({
    example: 'verification.status_changed',
    description:
      'verification.status_changed or verification.redacted (the payload of a test event keeps its own type); ' +
      'new types may be added: ignore the ones you do not know',
  })
  type!: string;
  @ApiProperty({ format: 'uuid' }) verification_id!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) delivery_status!: DeliveryStatus;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Attempts across every delivery cycle' })
  attempt_count!: number;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_attempt_at!: string | null;
  @ApiProperty({ nullable: true, type: 'integer' }) last_response_status!: number | null;
  @ApiProperty({ nullable: true, type: String, example: 'HTTP 500' }) last_error!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) next_attempt_at!: string | null;
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath('StatusChangedPayloadDto') }, { $ref: getSchemaPath('RedactedPayloadDto') }],
    discriminator: {
      propertyName: 'type',
      mapping: {
        [STATUS_CHANGED]: getSchemaPath('StatusChangedPayloadDto'),
        [VERIFICATION_REDACTED]: getSchemaPath('RedactedPayloadDto'),
      },
    },
    description:
      'The exact body that is POSTed. After the verification was redacted, its personal fields are erased here too ' +
      '(and data.verification.redacted_at is set); ids, status and version stay as at the change',
  })
  payload!: object;
}

export class WebhookEventDetailResponseDto extends WebhookEventResponseDto {
  @ApiProperty({ type: [WebhookAttemptResponseDto] }) attempts!: WebhookAttemptResponseDto[];
}

export class WebhookEventListResponseDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [WebhookEventResponseDto] }) data!: WebhookEventResponseDto[];
  @ApiProperty() has_more!: boolean;
  @ApiProperty({ nullable: true, type: String }) next_cursor!: string | null;
}

export class RedeliveryResponseDto {
  @ApiProperty({ enum: ['redelivery'] }) object!: 'redelivery';
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Events put back into delivery (at most 10,000 per call)' })
  count!: number;
}
