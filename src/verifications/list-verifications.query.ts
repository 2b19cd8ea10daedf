import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { commaListOf } from 'src/common/comma-list';
import { PageCursor, PageLimit, TimestampBound } from 'src/common/list-query.decorators';
import { VERIFICATION_STATUSES } from 'src/verifications/verification.types';

const STATUS_LIST = commaListOf(VERIFICATION_STATUSES);
export const VERIFICATION_SORTS = ['-created_at', 'created_at', '-updated_at', 'updated_at'] as const;
export type VerificationSort = (typeof VERIFICATION_SORTS)[number];

/** Query strings arrive as strings; ranges and cross-field rules are checked in the service. */
export class ListVerificationsQueryDto {
  @ApiPropertyOptional({
    description: 'Comma-separated statuses',
    pattern: STATUS_LIST.source,
    example: 'approved,rejected',
  })
  @IsOptional()
  @IsString()
  @Matches(STATUS_LIST, { message: `status must be a comma-separated list of ${VERIFICATION_STATUSES.join(', ')}` })
  status?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 255, description: 'Exact match' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(255)
  external_user_id?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 100,
    description: 'Case-insensitive substring of external_user_id, applicant full name or email',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @Matches(/^[^\p{Cc}]*$/u, { message: 'q must not contain control characters' })
  q?: string;

  @TimestampBound('Inclusive')
  created_from?: string;

  @TimestampBound('Exclusive')
  created_to?: string;

  @TimestampBound('Inclusive')
  updated_from?: string;

  @TimestampBound('Exclusive')
  updated_to?: string;

  @ApiPropertyOptional({ enum: VERIFICATION_SORTS, default: '-created_at' })
  @IsOptional()
  @IsIn(VERIFICATION_SORTS)
  sort?: VerificationSort;

  @PageLimit()
  limit?: string;

  @PageCursor()
  cursor?: string;
}
