import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsEmail,
  IsIn,
  IsInt,
  IsISO31661Alpha2,
  IsNotEmptyObject,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateNested,
  ValidationArguments,
  registerDecorator,
} from 'class-validator';
import {
  DOCUMENT_TYPES,
  REJECTION_REASONS,
  VERIFICATION_STATUSES,
  type DocumentType,
  type RejectionReason,
  type VerificationStatus,
} from 'src/verifications/verification.types';

const present = (key: string) => (dto: object) =>
  (dto as Record<string, unknown>)[key] !== null && (dto as Record<string, unknown>)[key] !== undefined;

export class ApplicantDto {
  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 100, example: 'Ada' })
  @ValidateIf(present('first_name'))
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  first_name?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, maxLength: 100, example: 'Lovelace' })
  @ValidateIf(present('last_name'))
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  last_name?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'date', example: '1815-12-10' })
  @ValidateIf(present('date_of_birth'))
  @IsString()
  @IsCalendarDate()
  date_of_birth?: string | null;

  @ApiPropertyOptional({ nullable: true, type: String, format: 'email', example: 'ada@example.com' })
  @ValidateIf(present('email'))
  @IsString()
  @MaxLength(254)
  @IsEmail()
  email?: string | null;
}

export class DocumentDto {
  @ApiProperty({ enum: DOCUMENT_TYPES })
  @IsIn(DOCUMENT_TYPES)
  type!: DocumentType;

  @ApiProperty({ example: 'GB', description: 'ISO 3166-1 alpha-2, upper case' })
  @IsString()
  @Matches(/^[A-Z]{2}$/, { message: 'country must be an upper-case ISO 3166-1 alpha-2 code' })
  @IsISO31661Alpha2()
  country!: string;
}

function IsCalendarDate(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isCalendarDate',
      target: target.constructor,
      propertyName: propertyName.toString(),
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
          const date = new Date(`${value}T00:00:00Z`);
          return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
        },
        defaultMessage: (args?: ValidationArguments) => `${args?.property ?? 'value'} must be a date (YYYY-MM-DD)`,
      },
    });
}

/** A flat map of strings: at most 20 keys, keys up to 40 characters, values up to 500. */
function IsMetadata(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isMetadata',
      target: target.constructor,
      propertyName: propertyName.toString(),
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
          const entries = Object.entries(value);
          return (
            entries.length <= 20 &&
            entries.every(
              ([key, item]) => key.length >= 1 && key.length <= 40 && typeof item === 'string' && item.length <= 500,
            )
          );
        },
        defaultMessage: () =>
          'metadata must be an object of at most 20 string values, keys 1-40 characters, values at most 500 characters',
      },
    });
}

export class CreateVerificationDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  account_id!: string;

  @ApiProperty({ minLength: 1, maxLength: 255, example: 'user-42' })
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  external_user_id!: string;

  @ApiPropertyOptional({ type: ApplicantDto, nullable: true })
  @ValidateIf(present('applicant'))
  @IsObject()
  @ValidateNested()
  @Type(() => ApplicantDto)
  applicant?: ApplicantDto | null;

  @ApiPropertyOptional({
    type: 'object',
    maxProperties: 20,
    additionalProperties: { type: 'string', maxLength: 500 },
    description: 'At most 20 string values, keys 1-40 characters, values at most 500',
    example: { plan: 'gold' },
  })
  @IsOptional()
  @IsMetadata()
  metadata?: Record<string, string>;
}

export class TransitionVerificationDto {
  @ApiProperty({ enum: VERIFICATION_STATUSES })
  @IsIn(VERIFICATION_STATUSES)
  status!: VerificationStatus;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'Checked before the transition: a mismatch (0 included, versions start at 1) is 409 version_conflict',
  })
  // null is refused rather than read as "no check": a client that meant to guard a move must not lose the guard.
  @ValidateIf((dto: TransitionVerificationDto) => dto.expected_version !== undefined)
  @IsInt()
  @Min(0)
  expected_version?: number;

  @ApiPropertyOptional({
    enum: REJECTION_REASONS,
    isArray: true,
    description: 'Required (non-empty) for rejected, refused otherwise',
  })
  @ValidateIf(present('rejection_reasons'))
  @IsArray()
  @ArrayMaxSize(REJECTION_REASONS.length)
  @ArrayUnique()
  @IsIn(REJECTION_REASONS, { each: true })
  rejection_reasons?: RejectionReason[];

  @ApiPropertyOptional({
    type: ApplicantDto,
    nullable: true,
    description: 'The fields given replace the stored ones; null clears the applicant',
  })
  @IsOptional()
  @IsObject()
  @IsNotEmptyObject()
  @ValidateNested()
  @Type(() => ApplicantDto)
  applicant?: ApplicantDto;

  @ApiPropertyOptional({ type: DocumentDto, nullable: true, description: 'null, like absent, keeps the stored one' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => DocumentDto)
  document?: DocumentDto;
}
