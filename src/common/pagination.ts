import { ApiError } from 'src/common/api-error';
import { CursorCodec, CursorPosition, InvalidCursorError } from 'src/common/cursor';
import type { SqlParams } from 'src/common/sql-params';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export type SortDirection = 'ASC' | 'DESC';

export function parseLimit(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_LIMIT;
  if (!/^\d{1,4}$/.test(raw)) throw ApiError.validation('limit', `must be an integer between 1 and ${MAX_LIMIT}`);
  const limit = Number(raw);
  if (limit < 1) throw ApiError.validation('limit', 'must not be less than 1');
  if (limit > MAX_LIMIT) throw ApiError.validation('limit', `must not be greater than ${MAX_LIMIT}`);
  return limit;
}

const MAX_CURSOR_LENGTH = 512;

export const invalidCursor = (): ApiError =>
  new ApiError('invalid_cursor', 'cursor is invalid, or was made for other filters or another sort', [
    { field: 'cursor', issue: 'is invalid for these filters and sort' },
  ]);

export function decodeCursor(codec: CursorCodec, scope: string, cursor: string | undefined): CursorPosition | null {
  if (cursor === undefined) return null;
  try {
    if (cursor.length > MAX_CURSOR_LENGTH) throw new InvalidCursorError('too long');
    return codec.decode(scope, cursor);
  } catch (error) {
    if (error instanceof InvalidCursorError) {
      throw invalidCursor();
    }
    throw error;
  }
}

/** Keyset condition: rows strictly after the cursor in the (column, id) order. */
export function keysetCondition(
  params: SqlParams,
  column: string,
  direction: SortDirection,
  position: CursorPosition,
): string {
  const op = direction === 'DESC' ? '<' : '>';
  return `(${column}, id) ${op} (${params.add(position.value)}::timestamptz, ${params.add(position.id)}::uuid)`;
}

/**
 * The response body of a page whose items are JSON texts already (written by SQL), joined without a
 * parse: for compact items, the bytes JSON.stringify writes for the page of the parsed items.
 */
export function listPageJson(page: ListPage<string>): string {
  const { data, has_more: hasMore, next_cursor: next } = page;
  return `{"object":"list","data":[${data.join(',')}],"has_more":${hasMore},"next_cursor":${JSON.stringify(next)}}`;
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
