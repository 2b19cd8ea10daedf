import { ApiProperty } from '@nestjs/swagger';
import type {
  Applicant,
  RejectionReason,
  VerificationDocument,
  VerificationStatus,
} from 'src/verifications/verification.types';
import { DOCUMENT_TYPES, REJECTION_REASONS, VERIFICATION_STATUSES } from 'src/verifications/verification.types';

// The contract's verification resources as the OpenAPI document describes them; verification.mapper.ts fills them.

class ApplicantResponseDto {
  @ApiProperty({ nullable: true, type: String }) first_name!: string | null;
  @ApiProperty({ nullable: true, type: String }) last_name!: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date' }) date_of_birth!: string | null;
  @ApiProperty({ nullable: true, type: String }) email!: string | null;
}

class DocumentResponseDto {
  @ApiProperty({ enum: DOCUMENT_TYPES }) type!: string;
  @ApiProperty({ example: 'GB' }) country!: string;
}

export class VerificationResponseDto {
  @ApiProperty({ format: 'uuid' }) id!: string;
  @ApiProperty({ enum: ['verification'] }) object!: 'verification';
  @ApiProperty() external_user_id!: string;
  @ApiProperty({ enum: VERIFICATION_STATUSES }) status!: VerificationStatus;
  @ApiProperty({ type: 'integer', minimum: 1 }) version!: number;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) submitted_at!: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) decided_at!: string | null;
  @ApiProperty({ type: ApplicantResponseDto, nullable: true }) applicant!: Applicant | null;
  @ApiProperty({ type: DocumentResponseDto, nullable: true }) document!: VerificationDocument | null;
  @ApiProperty({ enum: REJECTION_REASONS, isArray: true }) rejection_reasons!: RejectionReason[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) metadata!: Record<string, string>;
  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'When the personal data was erased (the redact route or retention); null while it is kept',
  })
  redacted_at!: string | null;
}

export class StatusHistoryEntryDto {
  @ApiProperty({ enum: VERIFICATION_STATUSES }) status!: VerificationStatus;
  @ApiProperty({ format: 'date-time' }) at!: string;
  @ApiProperty({ type: 'integer', minimum: 1 }) version!: number;
}

export class VerificationDetailResponseDto extends VerificationResponseDto {
  @ApiProperty({ type: [StatusHistoryEntryDto] }) status_history!: StatusHistoryEntryDto[];
}

export class VerificationListResponseDto {
  @ApiProperty({ enum: ['list'] }) object!: 'list';
  @ApiProperty({ type: [VerificationResponseDto] }) data!: VerificationResponseDto[];
  @ApiProperty() has_more!: boolean;
  @ApiProperty({ nullable: true, type: String }) next_cursor!: string | null;
}
