/**
 * The work both list floors do per request, with no framework: one query to authenticate the Bearer
 * secret by its SHA-256 hash, then the list query, then the same JSON as the service. floor-server.ts
 * serves it on bare node:http, nest-floor.ts on a bare Nest + Express app.
 * Reads DATABASE_URL and SECRET_ENCRYPTION_KEY.
 */
import { Pool } from 'pg';
import { hashSecret, looksLikeWebhookSecret } from 'src/accounts/secret-crypto';
import { CursorCodec, cursorScope, InvalidCursorError } from 'src/common/cursor';
import { DEFAULT_LIMIT, MAX_LIMIT } from 'src/common/pagination';
import { FloorVerificationRow, floorVerificationColumns, floorVerificationJson } from '../common/floor-json';

export const LIST_PATH = '/api/v1/public/kyc/verifications';

// Same pool size as src/database/data-source-options.ts (extra.max).
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const codec = new CursorCodec(Buffer.from(process.env.SECRET_ENCRYPTION_KEY ?? '', 'base64'));

// The SQL below is copied verbatim from AccountsService.accountIdForSecret and
// VerificationSearchService.list with keysetList (src/accounts/accounts.service.ts,
// src/verifications/verification-search.service.ts, src/common/keyset-list.ts), with the columns the
// contract's JSON needs (../common/floor-json.ts) instead of the SQL-written JSON: the floor is the
// naive server that parses rows and maps them in Node. main.ts checks before every run that the
// floor and the service return the same rows for every scenario.
const AUTH_SQL = `SELECT account_id FROM account_secrets
        WHERE secret_hash = $1 AND (expires_at IS NULL OR expires_at > now())`;

const COLUMNS = floorVerificationColumns();

const SORTS: Record<string, { column: 'created_at' | 'updated_at'; direction: 'ASC' | 'DESC' }> = {
  '-created_at': { column: 'created_at', direction: 'DESC' },
  created_at: { column: 'created_at', direction: 'ASC' },
  '-updated_at': { column: 'updated_at', direction: 'DESC' },
  updated_at: { column: 'updated_at', direction: 'ASC' },
};

/** What a floor answers: the status and the JSON body, for its own HTTP layer to send. */
export interface FloorReply {
  status: number;
  body: unknown;
}

const reply = (status: number, body: unknown): FloorReply => ({ status, body });

async function authenticate(authorization: string | undefined): Promise<string | null> {
  const match = /^bearer +(\S+)$/i.exec(authorization ?? '');
  if (!match?.[1] || !looksLikeWebhookSecret(match[1])) return null;
  const rows = await pool.query<{ account_id: string }>(AUTH_SQL, [hashSecret(match[1])]);
  return rows.rows[0]?.account_id ?? null;
}

/** The list route's whole job, minus HTTP: authenticate, build the SQL, run it, shape the page. */
export async function listPage(authorization: string | undefined, query: URLSearchParams): Promise<FloorReply> {
  const accountId = await authenticate(authorization);
  if (!accountId) return reply(401, { error: { code: 'unauthorized' } });
  const limit = Number(query.get('limit') ?? DEFAULT_LIMIT);
  const sort = query.get('sort') ?? '-created_at';
  const order = SORTS[sort];
  if (!order || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
    return reply(400, { error: { code: 'validation_failed' } });
  const statuses = query.get('status') ? [...new Set(query.get('status')?.split(','))].sort() : undefined;
  const q = query.get('q') ?? undefined;
  const scope = cursorScope({ route: 'floor', accountId, statuses, q, sort });

  const values: unknown[] = [];
  const add = (value: unknown): string => `$${values.push(value)}`;
  const where = [`account_id = ${add(accountId)}`];
  if (statuses) where.push(`status = ANY(${add(statuses)}::varchar[])`);
  if (q !== undefined)
    where.push(`search_text LIKE '%' || lower(${add(q.replace(/[\\%_]/g, (c) => `\\${c}`))}) || '%'`);
  const cursor = query.get('cursor');
  if (cursor) {
    try {
      const position = codec.decode(scope, cursor);
      const op = order.direction === 'DESC' ? '<' : '>';
      where.push(`(${order.column}, id) ${op} (${add(position.value)}::timestamptz, ${add(position.id)}::uuid)`);
    } catch (error) {
      if (error instanceof InvalidCursorError) return reply(400, { error: { code: 'invalid_cursor' } });
      throw error;
    }
  }
  const orderBy = `ORDER BY ${order.column} ${order.direction}, id ${order.direction}`;
  const limitParam = add(limit + 1);
  const sql =
    q === undefined
      ? `SELECT ${COLUMNS} FROM verifications WHERE ${where.join(' AND ')} ${orderBy} LIMIT ${limitParam}`
      : `SELECT ${COLUMNS} FROM (
           SELECT id AS page_id, ${order.column} AS page_at FROM verifications WHERE ${where.join(' AND ')} ${orderBy} LIMIT ${limitParam}
         ) page JOIN verifications ON verifications.id = page.page_id
         ORDER BY page.page_at ${order.direction}, page.page_id ${order.direction}`;
  const result = await pool.query<FloorVerificationRow>(sql, values);
  const hasMore = result.rows.length > limit;
  const rows = hasMore ? result.rows.slice(0, limit) : result.rows;
  const last = rows[rows.length - 1];
  return reply(200, {
    object: 'list',
    data: rows.map(floorVerificationJson),
    has_more: hasMore,
    next_cursor:
      hasMore && last
        ? codec.encode(scope, {
            value: (order.column === 'created_at' ? last.createdAt : last.updatedAt).toISOString(),
            id: last.id,
          })
        : null,
  });
}

export async function closeFloorPool(): Promise<void> {
  await pool.end();
}
