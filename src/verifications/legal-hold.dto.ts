import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import type { ActorType } from 'src/http/actor';

export class PutLegalHoldDto {
  @ApiProperty({ minLength: 1, maxLength: 500, example: 'AML record keeping (AMLD Art. 40)' })
  @IsString()
  @Length(1, 500)
  reason!: string;

  @ApiPropertyOptional({ maxLength: 100, nullable: true, type: String, example: 'CASE-2026-0042' })
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsString()
  @MaxLength(100)
  case_reference?: string | null;

  @ApiPropertyOptional({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When the hold ends (in the future); null or absent: until it is released',
  })
  @ValidateIf((_, value) => value !== null)
  @IsOptional()
  @IsString()
  until?: string | null;
}

export class LegalHoldPlacedByDto {
  @ApiProperty({ enum: ['operator', 'client', 'break_glass', 'system'] }) type!: ActorType;
  @ApiProperty({ nullable: true, type: String }) id!: string | null;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
}

export class LegalHoldResponseDto {
  @ApiProperty({ enum: ['legal_hold'] }) object!: 'legal_hold';
  @ApiProperty({ format: 'uuid' }) verification_id!: string;
  @ApiProperty() reason!: string;
  @ApiProperty({ nullable: true, type: String }) case_reference!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) until!: string | null;
  @ApiProperty({ format: 'date-time' }) placed_at!: string;
  @ApiProperty({ type: LegalHoldPlacedByDto }) placed_by!: LegalHoldPlacedByDto;
}
