import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString } from 'class-validator';
import { DEFAULT_LIMIT, MAX_LIMIT } from 'src/common/pagination';

/**
 * Query fields every list route shares. They arrive as strings; their meaning (ISO 8601 and ranges in
 * src/common/timestamps.ts, 1-100 in src/common/pagination.ts) is checked there so that every list
 * answers the same way.
 */
export function TimestampBound(bound: 'Inclusive' | 'Exclusive'): PropertyDecorator {
  return applyDecorators(ApiPropertyOptional({ format: 'date-time', description: bound }), IsOptional(), IsString());
}

export function PageLimit(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT }),
    IsOptional(),
    IsString(),
  );
}

// Length and shape are the codec's business: any bad cursor is 400 invalid_cursor, not validation_failed.
export function PageCursor(): PropertyDecorator {
  return applyDecorators(
    ApiPropertyOptional({ description: 'next_cursor of the previous page' }),
    IsOptional(),
    IsString(),
  );
}
