import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateIf } from 'class-validator';

/** Checked by src/accounts/webhook-url.ts when the account is written, so every write answers alike. */
const WEBHOOK_URL = {
  type: String,
  format: 'uri',
  nullable: true,
  maxLength: 2048,
  example: 'https://acme.example/webhooks/kyc',
} as const;

export class CreateAccountDto {
  @ApiProperty({ example: 'Acme Bank', minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name!: string;

  @ApiPropertyOptional({
    ...WEBHOOK_URL,
    description:
      'Absolute https URL (http too when WEBHOOK_ALLOW_INSECURE_URLS=true), no user-info, a host of at most 253 characters',
  })
  @ValidateIf((dto: CreateAccountDto) => dto.webhook_url !== undefined && dto.webhook_url !== null)
  @IsString()
  webhook_url?: string | null;
}

export class UpdateAccountDto {
  @ApiPropertyOptional({ example: 'Acme Bank Ltd', minLength: 1, maxLength: 200, description: 'null is refused' })
  @ValidateIf((dto: UpdateAccountDto) => dto.name !== undefined)
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  @Matches(/\S/, { message: 'name must not be blank' })
  name?: string;

  @ApiPropertyOptional({ ...WEBHOOK_URL, description: 'null clears the URL; otherwise as on create' })
  @ValidateIf((dto: UpdateAccountDto) => dto.webhook_url !== undefined && dto.webhook_url !== null)
  @IsString()
  webhook_url?: string | null;
}

export class RotateSecretDto {
  @ApiPropertyOptional({ type: 'integer', default: 86400, minimum: 0, maximum: 604800 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(604800)
  grace_period_seconds?: number;
}

export class AccountResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ enum: ['account'] }) object!: 'account';
  @ApiProperty() name!: string;
  @ApiProperty({ nullable: true, type: String, format: 'uri' }) webhook_url!: string | null;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
}

export class CreatedAccountResponseDto extends AccountResponseDto {
  @ApiProperty({ description: 'Shown only here and on rotation', example: 'whsec_…' }) webhook_secret!: string;
}

export class RotatedSecretResponseDto {
  @ApiProperty({ example: 'whsec_…' }) webhook_secret!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) previous_secret_expires_at!: string | null;
}
