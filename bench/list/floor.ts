/**
 * The list bench's floor: the naive server a developer would write, on bare node:http + pg with no
 * framework and nothing of src/. Per request: one query authenticating the Bearer secret by its
 * SHA-256, the keyset list query, rows parsed by pg and mapped in Node to the contract's JSON, a
 * signed cursor. bench/list/main.ts checks before each scenario that it returns the service's rows.
 * GET /select-1 is the lowest floor of all: one `SELECT 1` per request and a small JSON answer.
 * Env: FLOOR_PORT, DATABASE_URL, SECRET_ENCRYPTION_KEY.
 */
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Pool } from 'pg';
import {
  FloorVerificationRow,
  Refusal,
  floorVerificationColumns,
  floorVerificationJson,
  serveFloor,
} from '../harness/floor-json';

const LIST_PATH = '/api/v1/public/kyc/verifications';
// The service's pool size.
const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const key = Buffer.from(
  hkdfSync('sha256', Buffer.from(process.env.SECRET_ENCRYPTION_KEY ?? '', 'base64'), '', 'floor-cursor', 32),
);
const COLUMNS = floorVerificationColumns();
const SORTS = ['-created_at', 'created_at', '-updated_at', 'updated_at'];

const sign = (scope: string, payload: string): string =>
  createHmac('sha256', key).update(`${scope}.${payload}`).digest('base64url').slice(0, 32);

function encodeCursor(scope: string, value: string, id: string): string {
  const payload = Buffer.from(JSON.stringify([value, id])).toString('base64url');
  return `${payload}.${sign(scope, payload)}`;
}

/** The cursor's [value, id], or null when it was not made for this scope. */
function decodeCursor(scope: string, cursor: string): [string, string] | null {
  const [payload = '', signature = ''] = cursor.split('.');
  const expected = Buffer.from(sign(scope, payload));
  if (expected.length !== signature.length || !timingSafeEqual(expected, Buffer.from(signature))) return null;
  try {
    const position = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as unknown;
    return Array.isArray(position) && position.length === 2 ? (position as [string, string]) : null;
  } catch {
    return null;
  }
}

async function accountOf(authorization: string | undefined): Promise<string | null> {
  const secret = /^bearer +(whsec_[A-Za-z0-9+/]{43}=)$/i.exec(authorization ?? '')?.[1];
  if (!secret) return null;
  const { rows } = await pool.query<{ account_id: string }>(
    'SELECT account_id FROM account_secrets WHERE secret_hash = $1 AND (expires_at IS NULL OR expires_at > now())',
    [createHash('sha256').update(secret).digest()],
  );
  return rows[0]?.account_id ?? null;
}

async function listPage(authorization: string | undefined, query: URLSearchParams): Promise<unknown> {
  const accountId = await accountOf(authorization);
  if (!accountId) throw new Refusal(401, 'unauthorized');
  const limit = Number(query.get('limit') ?? 20);
  const sort = query.get('sort') ?? '-created_at';
  const order = { column: sort.replace('-', ''), direction: sort.startsWith('-') ? 'DESC' : 'ASC' };
  if (!SORTS.includes(sort) || !Number.isInteger(limit) || limit < 1 || limit > 100)
    throw new Refusal(400, 'validation_failed');
  const statuses = query.get('status') ? [...new Set(query.get('status')?.split(','))].sort() : undefined;
  const q = query.get('q') ?? undefined;
  const filters = JSON.stringify([accountId, statuses, q, sort]);
  const scope = createHash('sha256').update(filters).digest('base64url');

  const values: unknown[] = [];
  const add = (value: unknown): string => `$${values.push(value)}`;
  const where = [`account_id = ${add(accountId)}`];
  if (statuses) where.push(`status = ANY(${add(statuses)}::varchar[])`);
  if (q !== undefined)
    where.push(`search_text LIKE '%' || lower(${add(q.replace(/[\\%_]/g, (c) => `\\${c}`))}) || '%'`);
  const cursor = query.get('cursor');
  if (cursor) {
    const position = decodeCursor(scope, cursor);
    if (!position) throw new Refusal(400, 'invalid_cursor');
    const op = order.direction === 'DESC' ? '<' : '>';
    where.push(`(${order.column}, id) ${op} (${add(position[0])}::timestamptz, ${add(position[1])}::uuid)`);
  }
  const orderBy = `ORDER BY ${order.column} ${order.direction}, id ${order.direction}`;
  const page = `WHERE ${where.join(' AND ')} ${orderBy} LIMIT ${add(limit + 1)}`;
  // With q, the page's keys first, then its rows: as the service, so the trigram match stays on the index.
  const sql =
    q === undefined
      ? `SELECT ${COLUMNS} FROM verifications ${page}`
      : `SELECT ${COLUMNS} FROM (SELECT id AS page_id, ${order.column} AS page_at FROM verifications ${page}) p
         JOIN verifications ON verifications.id = p.page_id ORDER BY p.page_at ${order.direction}, p.page_id ${order.direction}`;
  const { rows } = await pool.query<FloorVerificationRow>(sql, values);
  const hasMore = rows.length > limit;
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  const lastAt = last && (order.column === 'created_at' ? last.createdAt : last.updatedAt);
  return {
    object: 'list',
    data: data.map(floorVerificationJson),
    has_more: hasMore,
    next_cursor: hasMore && last && lastAt ? encodeCursor(scope, lastAt.toISOString(), last.id) : null,
  };
}

serveFloor('list floor', pool, async (req) => {
  const url = new URL(req.url ?? '/', 'http://floor');
  if (url.pathname === '/select-1') return (await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0];
  if (req.method !== 'GET' || url.pathname !== LIST_PATH) throw new Refusal(404, 'not_found');
  return listPage(req.headers.authorization, url.searchParams);
});
