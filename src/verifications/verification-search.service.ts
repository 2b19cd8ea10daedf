import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { parseCommaList } from 'src/common/comma-list';
import { CursorCodec } from 'src/common/cursor';
import { CURSOR_CODEC } from 'src/common/cursor.provider';
import { KeysetSort, PageSql, filter, keysetList } from 'src/common/keyset-list';
import type { ListPage } from 'src/common/pagination';
import { onReplica } from 'src/database/read-replica';
import { VERIFICATION_COLUMNS, type Verification } from 'src/verifications/verification.entity';
import { VerificationResponseDto, toVerificationResponse } from 'src/verifications/verification.mapper';
import type { ListVerificationsQueryDto, VerificationSort } from 'src/verifications/list-verifications.query';

const SORTS: Record<VerificationSort, KeysetSort<Verification>> = {
  '-created_at': { column: 'created_at', direction: 'DESC', at: (row) => row.createdAt },
  created_at: { column: 'created_at', direction: 'ASC', at: (row) => row.createdAt },
  '-updated_at': { column: 'updated_at', direction: 'DESC', at: (row) => row.updatedAt },
  updated_at: { column: 'updated_at', direction: 'ASC', at: (row) => row.updatedAt },
};

/** Escapes LIKE wildcards so q is always a literal substring. */
function likeLiteral(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * With q, the page's keys come first from an index-only walk of the covering keyset index
 * (search_text is INCLUDEd), then only those rows are read: see docs/performance.md.
 */
function keysThenRows({ where, orderBy, limit, column, direction }: PageSql): string {
  return `SELECT ${VERIFICATION_COLUMNS} FROM (
           SELECT id AS page_id, ${column} AS page_at FROM verifications WHERE ${where} ${orderBy} LIMIT ${limit}
         ) page JOIN verifications ON verifications.id = page.page_id
         ORDER BY page.page_at ${direction}, page.page_id ${direction}`;
}

@Injectable()
export class VerificationSearchService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CURSOR_CODEC) private readonly cursors: CursorCodec,
  ) {}

  async list(accountId: string, query: ListVerificationsQueryDto): Promise<ListPage<VerificationResponseDto>> {
    const sort = query.sort ?? '-created_at';
    return keysetList<Verification, VerificationResponseDto>(
      this.cursors,
      {
        route: 'verifications',
        accountId,
        limit: query.limit,
        cursor: query.cursor,
        table: 'verifications',
        columns: VERIFICATION_COLUMNS,
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
        select: query.q === undefined ? undefined : keysThenRows,
        toJson: toVerificationResponse,
      },
      (sql, values) => onReplica(this.dataSource, (manager) => manager.query(sql, values)),
    );
  }
}
