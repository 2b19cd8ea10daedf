import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength } from 'class-validator';
import { ROLES, type Role } from 'src/http/actor';
import { DEFAULT_EXPIRES_IN_DAYS, MAX_EXPIRES_IN_DAYS } from 'src/operators/operator-key';

export class CreateOperatorKeyDto {
  @ApiProperty({ example: 'nightly-reconciliation', minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiProperty({ enum: ROLES, example: 'viewer' })
  @IsIn(ROLES)
  role!: Role;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_EXPIRES_IN_DAYS, default: DEFAULT_EXPIRES_IN_DAYS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_EXPIRES_IN_DAYS)
  expires_in_days?: number;
}

export class OperatorKeyResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ enum: ['operator_key'] }) object!: 'operator_key';
  @ApiProperty() name!: string;
  @ApiProperty({ enum: ROLES }) role!: Role;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) expires_at!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) last_used_at!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revoked_at!: string | null;
}

export class CreatedOperatorKeyResponseDto extends OperatorKeyResponseDto {
  @ApiProperty({
    description: 'The key, `kyc_op_` + base64url of 32 random bytes: shown this once only (it is stored hashed)',
    example: 'kyc_op_3q2-7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
  })
  key!: string;
}

export class OperatorKeyListResponseDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [OperatorKeyResponseDto], description: 'Every key, newest first, revoked and expired included' })
  data!: OperatorKeyResponseDto[];
  @ApiProperty({ description: 'Always false: the list is never paged' }) has_more!: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'Always null' }) next_cursor!: string | null;
}
