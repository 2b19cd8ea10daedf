import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CursorCodec, cursorScope } from 'src/common/cursor';
import { CURSOR_CODEC } from 'src/common/cursor.provider';
import { onReplica } from 'src/database/read-replica';
import { ListPage, SortDirection, decodeCursor, keysetCondition, parseLimit, toPage } from 'src/common/pagination';
import { SqlParams } from 'src/common/sql-params';
import { checkRange, optionalTimestamp } from 'src/common/timestamps';
import { VERIFICATION_COLUMNS, type Verification } from 'src/verifications/verification.entity';
import { VerificationResponseDto, toVerificationResponse } from 'src/verifications/verification.mapper';
import type { ListVerificationsQueryDto, VerificationSort } from 'src/verifications/list-verifications.query';
import type { VerificationStatus } from 'src/verifications/verification.types';

const SORT_COLUMN: Record<VerificationSort, { column: 'created_at' | 'updated_at'; direction: SortDirection }> = {
  '-created_at': { column: 'created_at', direction: 'DESC' },
  created_at: { column: 'created_at', direction: 'ASC' },
  '-updated_at': { column: 'updated_at', direction: 'DESC' },
  updated_at: { column: 'updated_at', direction: 'ASC' },
};

/** Escapes LIKE wildcards so q is always a literal substring. */
function likeLiteral(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}

@Injectable()
export class VerificationSearchService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(CURSOR_CODEC) private readonly cursors: CursorCodec,
  ) {}

  async list(accountId: string, query: ListVerificationsQueryDto): Promise<ListPage<VerificationResponseDto>> {
    const limit = parseLimit(query.limit);
    const createdFrom = optionalTimestamp('created_from', query.created_from);
    const createdTo = optionalTimestamp('created_to', query.created_to);
    const updatedFrom = optionalTimestamp('updated_from', query.updated_from);
    const updatedTo = optionalTimestamp('updated_to', query.updated_to);
    checkRange('created_from', createdFrom, 'created_to', createdTo);
    checkRange('updated_from', updatedFrom, 'updated_to', updatedTo);
    const statuses = query.status ? ([...new Set(query.status.split(','))].sort() as VerificationStatus[]) : undefined;
    const sort = query.sort ?? '-created_at';
    const { column, direction } = SORT_COLUMN[sort];

    const scope = cursorScope({
      route: 'verifications',
      accountId,
      statuses,
      externalUserId: query.external_user_id,
      q: query.q,
      createdFrom: createdFrom?.toISOString(),
      createdTo: createdTo?.toISOString(),
      updatedFrom: updatedFrom?.toISOString(),
      updatedTo: updatedTo?.toISOString(),
      sort,
    });
    const position = decodeCursor(this.cursors, scope, query.cursor);

    const params = new SqlParams();
    const where = [`account_id = ${params.add(accountId)}`];
    if (statuses) where.push(`status = ANY(${params.add(statuses)}::varchar[])`);
    if (query.external_user_id !== undefined) where.push(`external_user_id = ${params.add(query.external_user_id)}`);
    if (query.q !== undefined) where.push(`search_text LIKE '%' || lower(${params.add(likeLiteral(query.q))}) || '%'`);
    if (createdFrom) where.push(`created_at >= ${params.add(createdFrom)}`);
    if (createdTo) where.push(`created_at < ${params.add(createdTo)}`);
    if (updatedFrom) where.push(`updated_at >= ${params.add(updatedFrom)}`);
    if (updatedTo) where.push(`updated_at < ${params.add(updatedTo)}`);
    if (position) where.push(keysetCondition(params, column, direction, position));

    const order = `ORDER BY ${column} ${direction}, id ${direction}`;
    const limitParam = params.add(limit + 1);
    // With q, the page's keys come first from an index-only walk of the covering keyset index
    // (search_text is INCLUDEd), then only those rows are read: see docs/performance.md.
    const sql = query.q === undefined
      ? `SELECT ${VERIFICATION_COLUMNS} FROM verifications WHERE ${where.join(' AND ')} ${order} LIMIT ${limitParam}`
      : `SELECT ${VERIFICATION_COLUMNS} FROM (
           SELECT id AS page_id, ${column} AS page_at FROM verifications WHERE ${where.join(' AND ')} ${order} LIMIT ${limitParam}
         ) page JOIN verifications ON verifications.id = page.page_id
         ORDER BY page.page_at ${direction}, page.page_id ${direction}`;
    const rows: Verification[] = await onReplica(this.dataSource, (manager) => manager.query(sql, params.values));
    return toPage(rows, limit, toVerificationResponse, (row) => ({
      value: (column === 'created_at' ? row.createdAt : row.updatedAt).toISOString(),
      id: row.id,
    }), this.cursors, scope);
  }
}

