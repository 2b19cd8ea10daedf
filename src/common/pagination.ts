import { ApiError } from 'src/common/api-error';
import { CursorCodec, CursorPosition, InvalidCursorError } from 'src/common/cursor';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export type SortDirection = 'ASC' | 'DESC';

/** Collects positional parameters so no value is ever spliced into SQL text. */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function isCalendarDate(day: string): boolean {
  const date = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}

/** ISO 8601 date or date-time; a date-time without a zone is read as UTC. */
export function parseTimestamp(field: string, raw: string): Date {
  const dateTime = DATE_TIME.exec(raw);
  if ((!dateTime && !DATE_ONLY.test(raw)) || !isCalendarDate(raw.slice(0, 10))) {
    throw ApiError.validation(field, 'must be an ISO 8601 date-time');
  }
  const text = !dateTime ? `${raw}T00:00:00Z` : dateTime[1] ? raw : `${raw}Z`;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw ApiError.validation(field, 'must be an ISO 8601 date-time');
  // Stored values are whole milliseconds and Date truncates finer digits; rounding a sub-millisecond
  // bound up keeps both `from >= x` and `to < x` exact against millisecond values.
  const subMillis = /\.\d{3}(\d+)/.exec(raw)?.[1];
  return subMillis && /[1-9]/.test(subMillis) ? new Date(date.getTime() + 1) : date;
}

export function checkRange(fromField: string, from: Date | undefined, toField: string, to: Date | undefined): void {
  if (from && to && from.getTime() > to.getTime()) {
    throw ApiError.validation(fromField, `must not be after ${toField}`);
  }
}

export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,4}$/.test(raw)) throw ApiError.validation('limit', 'must be an integer between 1 and 100');
  const limit = Number(raw);
  if (limit < 1) throw ApiError.validation('limit', 'must not be less than 1');
  if (limit > MAX_LIMIT) throw ApiError.validation('limit', 'must not be greater than 100');
  return limit;
}

const MAX_CURSOR_LENGTH = 512;

export function decodeCursor(codec: CursorCodec, scope: string, cursor: string | undefined): CursorPosition | null {
  if (cursor === undefined) return null;
  try {
    if (cursor.length > MAX_CURSOR_LENGTH) throw new InvalidCursorError('too long');
    return codec.decode(scope, cursor);
  } catch (error) {
    if (error instanceof InvalidCursorError) {
      throw new ApiError('invalid_cursor', 'cursor is invalid, or was made for other filters or another sort', [
        { field: 'cursor', issue: 'is invalid for these filters and sort' },
      ]);
    }
    throw error;
  }
}

/** Keyset condition: rows strictly after the cursor in the (column, id) order. */
export function keysetCondition(params: SqlParams, column: string, direction: SortDirection, position: CursorPosition): string {
  const op = direction === 'DESC' ? '<' : '>';
  return `(${column}, id) ${op} (${params.add(position.value)}::timestamptz, ${params.add(position.id)}::uuid)`;
}

/** Rows were fetched with limit + 1; the extra one only says whether there is a next page. */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
  positionOf: (row: R) => CursorPosition,
  codec: CursorCodec,
  scope: string,
): ListPage<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    object: 'list',
    data: pageRows.map(map),
    has_more: hasMore,
    next_cursor: hasMore && last ? codec.encode(scope, positionOf(last)) : null,
  };
}
