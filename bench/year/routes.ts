import { Client } from 'pg';
import type { ApiClient } from '../harness/api';
import type { ApiGet } from '../harness/loads';
import { accountIdSql } from '../harness/seed';
import { benchSecret } from '../harness/service-env';
import { BIG } from './seed';

const PUBLIC = '/api/v1/public/kyc';
const LIST = `${PUBLIC}/verifications`;
const EVENTS = `${PUBLIC}/webhook-events`;
/** The deep page: the list's page 201, or the last one where the account has fewer. */
const HOPS = 200;

type Page = { has_more: boolean; next_cursor: string | null };

/**
 * Every public route and filter the year bench measures, as the big account (a fifth of the rows)
 * asks them, on one database: label → the requests a paced load cycles through. The detail and
 * the delivery log by verification take 100 of its verifications, scattered over the year.
 */
export async function routesOf(db: Client, api: ApiClient): Promise<Map<string, ApiGet[]>> {
  const secret = benchSecret(BIG);
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM verifications WHERE account_id = ${accountIdSql(String(BIG))} ORDER BY hashtext(id::text) LIMIT 100`,
  );
  let deep = `${LIST}?limit=20`;
  for (let hop = 0; hop < HOPS; hop++) {
    const res = await api.request('GET', deep, secret);
    if (res.status !== 200) throw new Error(`GET ${deep}: HTTP ${res.status} ${res.body}`);
    const page = JSON.parse(res.body) as Page;
    if (!page.next_cursor) break;
    deep = `${LIST}?limit=20&cursor=${encodeURIComponent(page.next_cursor)}`;
  }
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const [from, to] = [new Date(Date.now() - 60 * 86_400_000), new Date(Date.now() - 30 * 86_400_000)];
  const one = (path: string): ApiGet[] => [{ path, secret }];
  const each = (path: (id: string) => string): ApiGet[] => rows.map(({ id }) => ({ path: path(id), secret }));
  return new Map([
    ['list: first page', one(`${LIST}?limit=20`)],
    [`list: page ${HOPS + 1} by cursor`, one(deep)],
    ['list: q', one(`${LIST}?q=hopper`)],
    ['list: status', one(`${LIST}?status=rejected`)],
    ['list: updated_from a week ago', one(`${LIST}?updated_from=${weekAgo}`)],
    ['list: sort=-updated_at', one(`${LIST}?sort=-updated_at`)],
    ['detail', each((id) => `${LIST}/${id}`)],
    ['delivery log: first page', one(EVENTS)],
    ['delivery log: verification_id', each((id) => `${EVENTS}?verification_id=${id}`)],
    ['delivery log: delivery_status=failed', one(`${EVENTS}?delivery_status=failed`)],
    [
      'delivery log: failed,delivered in a month',
      one(
        `${EVENTS}?delivery_status=failed,delivered&created_from=${from.toISOString()}&created_to=${to.toISOString()}`,
      ),
    ],
    ['webhook endpoint', one(`${PUBLIC}/webhook-endpoint`)],
    ['/metrics', one('/metrics')],
    ['/health/ready', one('/health/ready')],
  ]);
}
