import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { parseCommaList } from 'src/common/comma-list';
import { CursorCodec } from 'src/common/cursor';
import { CURSOR_CODEC } from 'src/common/cursor.provider';
import { KeysetSort, PageSql, filter, keysetList } from 'src/common/keyset-list';
import { SortDirection, listPageJson } from 'src/common/pagination';
import { onReplica } from 'src/database/read-replica';
import { VerificationJsonRow, verificationJsonColumns } from 'src/verifications/verification-json.sql';
import type { ListVerificationsQueryDto, VerificationSort } from 'src/verifications/list-verifications.query';

type SortColumn = 'created_at' | 'updated_at';

/** Per sort column, the select list: each row's JSON text, written by PostgreSQL, and its cursor key. */
const COLUMNS: Record<SortColumn, string> = {
  created_at: verificationJsonColumns('created_at'),
  updated_at: verificationJsonColumns('updated_at'),
};

type Sort = KeysetSort<VerificationJsonRow> & { column: SortColumn };

const sortOn = (column: SortColumn, direction: SortDirection): Sort => ({
  column,
  direction,
  at: (row) => row.cursor_at,
});

const SORTS: Record<VerificationSort, Sort> = {
  '-created_at': sortOn('created_at', 'DESC'),
  created_at: sortOn('created_at', 'ASC'),
  '-updated_at': sortOn('updated_at', 'DESC'),
  updated_at: sortOn('updated_at', 'ASC'),
};

/** Escapes LIKE wildcards so q is always a literal substring. */
function likeLiteral(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * With q, the page's keys come first from an index-only walk of the covering keyset index
 * (search_text is INCLUDEd), then only those rows are read: see docs/performance.md.
 */
const keysThenRows =
  (columns: string) =>
  ({ where, orderBy, limit, column, direction }: PageSql): string =>
    `SELECT ${columns} FROM (
           SELECT id AS page_id, ${column} AS page_at FROM verifications WHERE ${where} ${orderBy} LIMIT ${limit}
         ) page JOIN verifications ON verifications.id = page.page_id
         ORDER BY page.page_at ${direction}, page.page_id ${direction}`;

@Injectable()
export class VerificationSearchService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CURSOR_CODEC) private readonly cursors: CursorCodec,
  ) {}

  /** The page as its response body, JSON text: the rows come serialised from SQL and are not parsed again. */
  async list(accountId: string, query: ListVerificationsQueryDto): Promise<string> {
    const sort = query.sort ?? '-created_at';
    const columns = COLUMNS[SORTS[sort].column];
    const page = await keysetList<VerificationJsonRow, string>(
      this.cursors,
      {
        route: 'verifications',
        accountId,
        limit: query.limit,
        cursor: query.cursor,
        table: 'verifications',
        columns,
        filters: [
          filter(
            'statuses',
            parseCommaList(query.status),
            (statuses, params) => `status = ANY(${params.add(statuses)}::varchar[])`,
          ),
          filter('externalUserId', query.external_user_id, (id, params) => `external_user_id = ${params.add(id)}`),
          filter('q', query.q, (q, params) => `search_text LIKE '%' || lower(${params.add(likeLiteral(q))}) || '%'`),
        ],
        ranges: [
          { name: 'created', from: query.created_from, to: query.created_to },
          { name: 'updated', from: query.updated_from, to: query.updated_to },
        ],
        sort: SORTS[sort],
        scope: { sort },
        select: query.q === undefined ? undefined : keysThenRows(columns),
        toJson: (row) => row.json,
      },
      (sql, values) => onReplica(this.dataSource, (manager) => manager.query(sql, values)),
    );
    return listPageJson(page);
  }
}
