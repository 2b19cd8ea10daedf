import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Matches, MaxLength, MinLength } from 'class-validator';
import { ACTOR_TYPES, AUDIT_OUTCOMES, type AuditOutcome } from 'src/audit/audit-entry';
import { commaListOf } from 'src/common/comma-list';
import { PageCursor, PageLimit, TimestampBound } from 'src/common/list-query.decorators';
import type { ActorType, ActorVia } from 'src/http/actor';

const ACTION_LIST = /^[a-z_]+\.[a-z_]+(,[a-z_]+\.[a-z_]+)*$/;
const ACTOR_TYPE_LIST = commaListOf(ACTOR_TYPES);
const VIAS = [
  'oidc',
  'operator_key',
  'admin_token',
  'webhook_secret',
  'service',
] as const satisfies readonly ActorVia[];

/** The filters the client's view shares with the admin's. */
export class ListClientAuditEventsQueryDto {
  @ApiPropertyOptional({ description: 'Comma-separated actor types', pattern: ACTOR_TYPE_LIST.source })
  @IsOptional()
  @IsString()
  @Matches(ACTOR_TYPE_LIST, { message: `actor_type must be a comma-separated list of ${ACTOR_TYPES.join(', ')}` })
  actor_type?: string;

  @ApiPropertyOptional({ description: 'Comma-separated action names', example: 'account.secret_rotated' })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  @Matches(ACTION_LIST, { message: 'action must be a comma-separated list of action names' })
  action?: string;

  @ApiPropertyOptional({ description: "The target's id (an account, a verification, a webhook event …)" })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  target_id?: string;

  @ApiPropertyOptional({ enum: AUDIT_OUTCOMES })
  @IsOptional()
  @IsIn(AUDIT_OUTCOMES)
  outcome?: AuditOutcome;

  @TimestampBound('Inclusive')
  from?: string;

  @TimestampBound('Exclusive')
  to?: string;

  @PageLimit()
  limit?: string;

  @PageCursor()
  cursor?: string;
}

export class ListAuditEventsQueryDto extends ListClientAuditEventsQueryDto {
  @ApiPropertyOptional({ description: 'The OIDC sub, operator key id or account id of the actor' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  actor_id?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID('all')
  account_id?: string;
}

export class ExportAuditEventsQueryDto {
  @TimestampBound('Inclusive')
  from?: string;

  @TimestampBound('Exclusive')
  to?: string;
}

export class AuditActorDto {
  @ApiProperty({ enum: ACTOR_TYPES }) type!: ActorType;
  @ApiProperty({ nullable: true, type: String, description: 'OIDC sub, operator key id, or account id' })
  id!: string | null;
  @ApiProperty({ nullable: true, type: String, description: "The operator's name; null for other actors" })
  name!: string | null;
  @ApiProperty({ enum: VIAS }) via!: ActorVia;
}

export class AuditTargetDto {
  @ApiProperty({ example: 'account' }) type!: string;
  @ApiProperty({ example: '0193a6f2-5d1a-7c4e-9a57-3f1f1e0b7c11' }) id!: string;
}

export class HiddenOperatorDto {
  @ApiProperty({ enum: ['operator'] }) type!: 'operator';
}

/** The fields both views of an entry show. */
class AuditEventFieldsDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ enum: ['audit_event'] }) object!: 'audit_event';
  @ApiProperty({ type: 'integer', minimum: 1 }) sequence!: number;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({ example: 'account.secret_rotated' }) action!: string;
  @ApiProperty({ enum: AUDIT_OUTCOMES }) outcome!: AuditOutcome;
  @ApiProperty({ type: AuditTargetDto, nullable: true }) target!: AuditTargetDto | null;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) account_id!: string | null;
  @ApiProperty({ type: [String], description: 'The names of the fields the change touched, never their values' })
  changes!: string[];
  @ApiProperty({ nullable: true, type: String }) request_id!: string | null;
}

export class ClientAuditEventResponseDto extends AuditEventFieldsDto {
  @ApiProperty({
    anyOf: [{ $ref: getSchemaPath(AuditActorDto) }, { $ref: getSchemaPath(HiddenOperatorDto) }],
    description: 'An operator shows as `{ "type": "operator" }` only',
  })
  actor!: AuditActorDto | HiddenOperatorDto;
}

export class AuditEventResponseDto extends AuditEventFieldsDto {
  @ApiProperty({ type: AuditActorDto }) actor!: AuditActorDto;
  @ApiProperty({ nullable: true, type: String, example: '203.0.113.7' }) source_ip!: string | null;
  @ApiProperty({ pattern: '^[0-9a-f]{64}$' }) previous_hash!: string;
  @ApiProperty({ pattern: '^[0-9a-f]{64}$' }) hash!: string;
}

export class AuditEventListResponseDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [AuditEventResponseDto] }) data!: AuditEventResponseDto[];
  @ApiProperty() has_more!: boolean;
  @ApiProperty({ nullable: true, type: String }) next_cursor!: string | null;
}

export class ClientAuditEventListResponseDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [ClientAuditEventResponseDto] }) data!: ClientAuditEventResponseDto[];
  @ApiProperty() has_more!: boolean;
  @ApiProperty({ nullable: true, type: String }) next_cursor!: string | null;
}
