import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, ValidateIf } from 'class-validator';
import { DISABLE_REASONS, type DisableReason } from 'src/webhooks/tables/webhook-endpoint.entity';

export const ENDPOINT_STATUSES = ['enabled', 'disabled'] as const;
export type EndpointStatus = (typeof ENDPOINT_STATUSES)[number];

export class WebhookEndpointHealthDto {
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_success_at!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_failure_at!: string | null;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'The first failed attempt after the last success; null once an attempt succeeds',
  })
  failing_since!: string | null;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Failed attempts since the last success' })
  consecutive_failures!: number;
}

export class WebhookEndpointResponseDto {
  @ApiProperty({ enum: ['webhook_endpoint'] }) object!: 'webhook_endpoint';
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'uri',
    description: "The account's webhook_url; null when it has none (events then fail with no_webhook_url)",
  })
  url!: string | null;
  @ApiProperty({ enum: ENDPOINT_STATUSES }) status!: EndpointStatus;
  // OpenAPI 3.0: a nullable enum lists null among its values, or validators refuse the null.
  @ApiProperty({
    enum: [...DISABLE_REASONS, null],
    nullable: true,
    type: String,
    description:
      'gone: the endpoint answered HTTP 410; failing: it failed longer than WEBHOOK_DISABLE_AFTER; client: through this API; operator: through the admin API',
  })
  disabled_reason!: DisableReason | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) disabled_at!: string | null;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Events waiting for the endpoint to be enabled' })
  held_count!: number;
  @ApiProperty({ type: WebhookEndpointHealthDto }) health!: WebhookEndpointHealthDto;
}

/** The url keeps the admin API's rules, checked by src/accounts/webhook-url.ts when it is written. */
export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({
    type: String,
    format: 'uri',
    nullable: true,
    maxLength: 2048,
    description:
      'Same rules as webhook_url in the admin API; null clears it. A new url enables the endpoint (its held events go out) and starts its health afresh',
  })
  @ValidateIf((dto: UpdateWebhookEndpointDto) => dto.url !== undefined && dto.url !== null)
  @IsString()
  url?: string | null;

  @ApiPropertyOptional({
    enum: ENDPOINT_STATUSES,
    description: 'disabled: nothing is sent, new events are held; enabled: the held events go out, oldest first',
  })
  @ValidateIf((dto: UpdateWebhookEndpointDto) => dto.status !== undefined)
  @IsIn(ENDPOINT_STATUSES)
  status?: EndpointStatus;
}
