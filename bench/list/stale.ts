import { Client } from 'pg';
import type { ApiGet } from '../harness/loads';
import type { Lab } from '../harness/processes';
import { fmt, log } from '../harness/report';
import { benchSecret } from '../harness/service-env';
import { accountIdSql, insertAccounts, insertVerifications, renderJson, verificationRows } from '../harness/seed';
import { IMPORT_ACCOUNT, LIST_PATH, VERIFICATION_COUNT } from './seed';

/**
 * The stale-statistics case: a big new client imports its users and autovacuum has not analyzed
 * verifications since. Each run removes an earlier run's import (then VACUUM (ANALYZE), so the
 * statistics know nothing of the account), turns autovacuum off on verifications (the list reads
 * no other table; verification_status_history gets no rows from a seed), imports IMPORT_ROWS
 * verifications of one new account, more than any seeded one has, and hands over its first page;
 * `analyze` is the ANALYZE that autovacuum would have run, with autovacuum back on. The import is
 * removed at the end of the run.
 */
export const IMPORT_ROWS = 100_000;
const ACCOUNT_ID = accountIdSql(String(IMPORT_ACCOUNT));

interface PlanNode {
  'Node Type': string;
  'Scan Direction'?: string;
  'Index Name'?: string;
  'Plan Rows': number;
  'Actual Rows': number;
  Plans?: PlanNode[];
}

export async function importBigClient(databaseUrl: string, lab: Lab) {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  lab.defer(() => db.end());
  const remove = async (): Promise<void> => {
    const { rowCount } = await db.query(`DELETE FROM verifications WHERE account_id = ${ACCOUNT_ID}`);
    await db.query(`DELETE FROM accounts WHERE id = ${ACCOUNT_ID}`);
    await db.query('ALTER TABLE verifications RESET (autovacuum_enabled)');
    if (rowCount) await db.query('VACUUM (ANALYZE) verifications');
  };
  await remove();
  lab.defer(remove);
  await db.query('ALTER TABLE verifications SET (autovacuum_enabled = false)');
  log(`stale statistics: importing ${fmt(IMPORT_ROWS)} verifications of a new account, autovacuum off on the table`);
  await insertAccounts(db, IMPORT_ACCOUNT, IMPORT_ACCOUNT, 'now()');
  const last = VERIFICATION_COUNT + IMPORT_ROWS;
  await insertVerifications(databaseUrl, [
    verificationRows(VERIFICATION_COUNT + 1, last, {
      created: `'${new Date().toISOString()}'::timestamptz - (${last} - n) * interval '10 milliseconds'`,
      account: String(IMPORT_ACCOUNT),
      status: `CASE WHEN h2 % 100 < 70 THEN 'approved' WHEN h2 % 100 < 92 THEN 'rejected' ELSE 'pending' END`,
    }),
  ]);
  // The JSON the API stores with each row; VACUUM without ANALYZE (statistics stay stale); dirty pages out.
  await renderJson(databaseUrl);
  await db.query('VACUUM verifications');
  await db.query('CHECKPOINT');
  /**
   * One line on the plan of the first page in its state. The query is an equivalent of the service's
   * statement (the same WHERE, ORDER BY and LIMIT; the service selects JSON built from these rows),
   * so the plan shape is the service's; the row estimate for the account is the node under the Limit.
   */
  const explain = async (state: string): Promise<string> => {
    const sql = `EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM verifications WHERE account_id = ${ACCOUNT_ID}
                  ORDER BY created_at DESC, id DESC LIMIT 21`;
    const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(sql);
    const { Plan: top, 'Execution Time': ms } = (rows[0] as (typeof rows)[0])['QUERY PLAN'][0];
    const nodes: PlanNode[] = [];
    for (let node: PlanNode | undefined = top; node; node = node.Plans?.[0]) nodes.push(node);
    const name = (n: PlanNode): string =>
      `${n['Node Type']}${n['Scan Direction'] === 'Backward' ? ' Backward' : ''}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`;
    const count = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM verifications WHERE account_id = ${ACCOUNT_ID}`,
    );
    const [actual, estimated] = [count.rows[0]?.n ?? 0, (nodes[1] ?? top)['Plan Rows']];
    const notStale =
      state.startsWith('before') && estimated * 10 > actual ? ' WARNING: the statistics are not stale' : '';
    return `${notStale}${state}: ${nodes.map(name).join(' > ')}; the account's rows: ${fmt(estimated)} estimated, ${fmt(actual)} actual (${fmt((100 * estimated) / actual, 1)} %); the page: ${top['Plan Rows']} estimated, ${top['Actual Rows']} actual, ${fmt(ms, 2)} ms`;
  };
  const analyze = async (): Promise<void> => {
    await db.query('ANALYZE verifications');
    await db.query('ALTER TABLE verifications RESET (autovacuum_enabled)');
  };
  const request: ApiGet = { path: `${LIST_PATH}?limit=20`, secret: benchSecret(IMPORT_ACCOUNT) };
  return { request, explain, analyze };
}
