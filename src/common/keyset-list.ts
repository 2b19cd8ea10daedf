import { CursorCodec, CursorPosition, cursorScope } from 'src/common/cursor';
import { ListPage, SortDirection, decodeCursor, keysetCondition, parseLimit, toPage } from 'src/common/pagination';
import { SqlParams } from 'src/common/sql-params';
import { checkRange, optionalTimestamp } from 'src/common/timestamps';

/** The order a list walks: a timestamp column, ties broken by id in the same direction. */
export interface KeysetSort<Row> {
  column: string;
  direction: SortDirection;
  /**
   * The row's value of `column`, where the next page starts: a Date, or the same instant as ISO 8601
   * text in UTC with milliseconds when the row comes pre-serialised from SQL.
   */
  at: (row: Row) => Date | string;
}

/** A filter the cursor is bound to (under `key`); when given, it adds its condition to the WHERE. */
export interface KeysetFilter {
  key: string;
  value: unknown;
  where?: (params: SqlParams) => string;
}

export function filter<V>(
  key: string,
  value: V | undefined,
  where: (value: V, params: SqlParams) => string,
): KeysetFilter {
  return { key, value, where: value === undefined ? undefined : (params) => where(value, params) };
}

/** The contract names every range alike: `<name>_from` (inclusive) and `<name>_to` (exclusive) on `<name>_at`. */
export interface KeysetRange {
  name: string;
  from: string | undefined;
  to: string | undefined;
}

export interface KeysetBounds {
  name: string;
  from: Date | undefined;
  to: Date | undefined;
}

/** What a page query is built from; a route may shape its own SELECT around it. */
export interface PageSql {
  where: string;
  orderBy: string;
  limit: string;
  column: string;
  direction: SortDirection;
}

/** A keyset-paged list route: only what is its own. The shared steps are keysetList's. */
export interface KeysetListSpec<Row, Json> {
  /** Binds cursors to the route, so one list's cursor is refused by another. */
  route: string;
  accountId: string;
  limit: string | undefined;
  cursor: string | undefined;
  /** In WHERE order, after the account and before the ranges. */
  filters: readonly KeysetFilter[];
  ranges: readonly KeysetRange[];
  sort: KeysetSort<Row>;
  /** Further values the cursor is bound to that are no filter (e.g. the sort parameter). */
  scope?: Record<string, unknown>;
  /** The page's statement around the WHERE, ORDER BY and LIMIT built here, written by the route's repository. */
  select: (page: PageSql) => string;
  toJson: (row: Row) => Json;
}

/** Parses every bound before checking any range, so a malformed one is reported before an inverted one. */
export function parseRanges(ranges: readonly KeysetRange[]): KeysetBounds[] {
  const bounds = ranges.map(({ name, from, to }) => ({
    name,
    from: optionalTimestamp(`${name}_from`, from),
    to: optionalTimestamp(`${name}_to`, to),
  }));
  for (const { name, from, to } of bounds) checkRange(`${name}_from`, from, `${name}_to`, to);
  return bounds;
}

type ScopeInput = Pick<KeysetListSpec<{ id: string }, unknown>, 'route' | 'accountId' | 'filters' | 'scope'>;

/** Everything a cursor is bound to; these keys and values are what existing cursors were signed under. */
export function scopeParts(
  { route, accountId, filters, scope }: ScopeInput,
  bounds: readonly KeysetBounds[],
): Record<string, unknown> {
  const parts: Record<string, unknown> = { route, accountId, ...scope };
  for (const { key, value } of filters) parts[key] = value;
  for (const { name, from, to } of bounds) {
    parts[`${name}From`] = from?.toISOString();
    parts[`${name}To`] = to?.toISOString();
  }
  return parts;
}

/** Where a page starts: strictly after `position` in the `sort` order. */
export interface KeysetAfter {
  sort: { column: string; direction: SortDirection };
  position: CursorPosition;
}

/** The account first, then the given filters, the ranges, and the keyset condition after a cursor. */
export function whereClauses(
  params: SqlParams,
  accountId: string,
  filters: readonly KeysetFilter[],
  bounds: readonly KeysetBounds[],
  after?: KeysetAfter,
): string[] {
  const where = [`account_id = ${params.add(accountId)}`];
  for (const { where: condition } of filters) if (condition) where.push(condition(params));
  for (const { name, from, to } of bounds) {
    if (from) where.push(`${name}_at >= ${params.add(from)}`);
    if (to) where.push(`${name}_at < ${params.add(to)}`);
  }
  if (after) where.push(keysetCondition(params, after.sort.column, after.sort.direction, after.position));
  return where;
}

/**
 * One list page: parse and check the parameters, bind the cursor to the filters, build the WHERE and
 * the keyset condition, read limit + 1 rows through `read`, and shape the page with its next cursor.
 */
export async function keysetList<Row extends { id: string }, Json>(
  codec: CursorCodec,
  spec: KeysetListSpec<Row, Json>,
  read: (sql: string, values: unknown[]) => Promise<Row[]>,
): Promise<ListPage<Json>> {
  const limit = parseLimit(spec.limit);
  const bounds = parseRanges(spec.ranges);
  const scope = cursorScope(scopeParts(spec, bounds));
  const position = decodeCursor(codec, scope, spec.cursor);

  const params = new SqlParams();
  const { column, direction, at } = spec.sort;
  const after = position ? { sort: spec.sort, position } : undefined;
  const where = whereClauses(params, spec.accountId, spec.filters, bounds, after).join(' AND ');
  const page: PageSql = {
    where,
    orderBy: `ORDER BY ${column} ${direction}, id ${direction}`,
    limit: params.add(limit + 1),
    column,
    direction,
  };
  const sql = spec.select(page);
  const rows = await read(sql, params.values);
  const positionOf = (row: Row) => {
    const value = at(row);
    return { value: typeof value === 'string' ? value : value.toISOString(), id: row.id };
  };
  return toPage(rows, limit, spec.toJson, positionOf, codec, scope);
}
