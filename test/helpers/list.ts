import type { TestApp } from './test-app';
import type { VerificationJson } from './factories';

export const LIST_PATH = '/api/v1/public/kyc/verifications';

export interface ListBody {
  object: string;
  data: VerificationJson[];
  has_more: boolean;
  next_cursor: string | null;
}

export async function listPage(t: TestApp, secret: string, query: Record<string, string | number>): Promise<ListBody> {
  const res = await t.http.get(LIST_PATH).query(query).set('authorization', `Bearer ${secret}`);
  if (res.status !== 200) throw new Error(`list failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as ListBody;
}

/** Follows next_cursor to the end; `between` runs after every page (to insert rows mid-walk). */
export async function listAll(
  t: TestApp,
  secret: string,
  query: Record<string, string | number>,
  between?: () => Promise<void>,
): Promise<VerificationJson[]> {
  const items: VerificationJson[] = [];
  let page = await listPage(t, secret, query);
  items.push(...page.data);
  for (let hops = 0; page.has_more; hops += 1) {
    if (hops > 1000) throw new Error('cursor walk does not end');
    if (page.next_cursor === null) throw new Error('has_more without next_cursor');
    if (between) await between();
    page = await listPage(t, secret, { ...query, cursor: page.next_cursor });
    items.push(...page.data);
  }
  if (page.next_cursor !== null) throw new Error('next_cursor on the last page');
  return items;
}

export const ids = (items: { id: string }[]): string[] => items.map((item) => item.id);
