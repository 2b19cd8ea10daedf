import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';
import { ApiError } from 'src/common/api-error';

/** The detail route's one parameter: read-your-writes when read replicas are configured. */
export class GetVerificationQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 2147483647,
    description:
      'Read-your-writes: the version you already know of (from a webhook or a transition). If the read ' +
      'replica has not applied it yet, the answer comes from the primary, so it shows at least that version ' +
      '(or the newest there is). Without read replicas every read is already current.',
  })
  @IsOptional()
  @IsString()
  @Matches(/^[1-9]\d{0,9}$/, { message: 'min_version must be a positive integer' })
  min_version?: string;
}

const MAX_VERSION = 2_147_483_647;

/** The parsed `min_version`, once the DTO has checked its shape. */
export function minVersionOf(query: GetVerificationQueryDto): number | undefined {
  if (query.min_version === undefined) return undefined;
  const version = Number(query.min_version);
  if (version > MAX_VERSION) throw ApiError.validation('min_version', `must not be greater than ${MAX_VERSION}`);
  return version;
}
