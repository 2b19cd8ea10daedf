import { Inject, Injectable } from '@nestjs/common';
import { parseCommaList } from 'src/common/comma-list';
import { CursorCodec } from 'src/common/cursor';
import { CURSOR_CODEC } from 'src/common/cursor.provider';
import { KeysetSort, filter, keysetList } from 'src/common/keyset-list';
import { SortDirection, listPageJson } from 'src/common/pagination';
import {
  type VerificationJsonRow,
  VerificationRepository,
  verificationPageSql,
} from 'src/verifications/verification.repository';
import type { ListVerificationsQueryDto, VerificationSort } from 'src/verifications/list-verifications.query';

type SortColumn = 'created_at' | 'updated_at';

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

@Injectable()
export class VerificationListService {
  constructor(
    private readonly verifications: VerificationRepository,
    @Inject(CURSOR_CODEC) private readonly cursors: CursorCodec,
  ) {}

  /** The page as its response body, JSON text: the rows' stored texts joined, not parsed again. */
  async list(accountId: string, query: ListVerificationsQueryDto): Promise<string> {
    const sort = query.sort ?? '-created_at';
    let statuses: string | undefined;
    const page = await keysetList<VerificationJsonRow, string>(
      this.cursors,
      {
        route: 'verifications',
        accountId,
        limit: query.limit,
        cursor: query.cursor,
        filters: [
          filter('statuses', parseCommaList(query.status), (wanted, params) => {
            // A page per status (verificationPageSql); with q, the covering index's one walk.
            const list = params.add(wanted);
            if (query.q !== undefined) return `status = ANY(${list}::varchar[])`;
            statuses = list;
            return 'status = wanted.status';
          }),
          filter('externalUserId', query.external_user_id, (id, params) => `external_user_id = ${params.add(id)}`),
          filter('q', query.q, (q, params) => `search_text LIKE '%' || lower(${params.add(likeLiteral(q))}) || '%'`),
        ],
        ranges: [
          { name: 'created', from: query.created_from, to: query.created_to },
          { name: 'updated', from: query.updated_from, to: query.updated_to },
        ],
        sort: SORTS[sort],
        scope: { sort },
        select: verificationPageSql(SORTS[sort].column, query.q !== undefined, () => statuses),
        toJson: (row) => row.json,
      },
      (sql, values) => this.verifications.readPage(sql, values),
    );
    return listPageJson(page);
  }
}
