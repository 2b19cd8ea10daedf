import { Client } from 'pg';
import type { ApiGet } from '../harness/loads';
import type { Lab } from '../harness/processes';
import { fmt, log } from '../harness/report';
import { benchSecret } from '../harness/service-env';
import { verificationPageSql } from 'src/verifications/verification.repository';
import { accountIdSql, insertAccounts, insertVerifications, renderJson, verificationRows } from '../harness/seed';
import { IMPORT_ACCOUNT, LIST_PATH, VERIFICATION_COUNT } from './seed';

/**
 * The stale-statistics case: a big new client imports its users and autovacuum has not analyzed
 * verifications since. Each run removes an earlier run's import, turns autovacuum off on the table,
 * imports IMPORT_ROWS verifications of one new account (more than any seeded one) and hands over its
 * first page; `analyze` is the ANALYZE autovacuum would have run. The import is removed at the end.
 */
export const IMPORT_ROWS = 100_000;
const ACCOUNT_ID = accountIdSql(String(IMPORT_ACCOUNT));

type PlanNode = Record<'Node Type' | 'Scan Direction' | 'Index Name', string> & {
  'Plan Rows': number;
  Plans?: PlanNode[];
};

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
  const rows = (from: number, to: number): string =>
    verificationRows(from, to, {
      created: `'${new Date().toISOString()}'::timestamptz - (${last} - n) * interval '10 milliseconds'`,
      account: String(IMPORT_ACCOUNT),
      status: `CASE WHEN h2 % 100 < 70 THEN 'approved' WHEN h2 % 100 < 92 THEN 'rejected' ELSE 'pending' END`,
    });
  // An ANALYZE early in the import counts its first 10 rows exactly (every account an MCV): "a small account".
  await insertVerifications(databaseUrl, [rows(VERIFICATION_COUNT + 1, VERIFICATION_COUNT + 10)]);
  await db.query(`ALTER TABLE verifications ALTER account_id SET STATISTICS 10000`);
  await db.query('ANALYZE verifications (account_id)');
  await db.query(`ALTER TABLE verifications ALTER account_id SET STATISTICS -1`);
  await insertVerifications(databaseUrl, [rows(VERIFICATION_COUNT + 11, last)]);
  // The JSON the API stores with each row; VACUUM without ANALYZE (statistics stay stale); dirty pages out.
  await renderJson(databaseUrl);
  await db.query('VACUUM verifications');
  await db.query('CHECKPOINT');
  /** The first page's plan, the service's statement and a plain SELECT … ORDER BY … LIMIT 21 (the shape before it). */
  const page = { where: `account_id = ${ACCOUNT_ID}`, orderBy: 'ORDER BY created_at DESC, id DESC', limit: '21' };
  const shapes = {
    service: verificationPageSql()({ ...page, column: 'created_at', direction: 'DESC' }),
    plain: `SELECT * FROM verifications WHERE ${page.where} ${page.orderBy} LIMIT ${page.limit}`,
  };
  const explain = async (state: string): Promise<string> => {
    const count = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM verifications WHERE ${page.where}`);
    const actual = count.rows[0]?.n ?? 0;
    const lines: string[] = [];
    for (const [shape, sql] of Object.entries(shapes)) {
      const { rows } = await db.query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
      );
      const { Plan: top, 'Execution Time': ms } = (rows[0] as (typeof rows)[0])['QUERY PLAN'][0];
      const nodes: PlanNode[] = [];
      for (let node: PlanNode | undefined = top; node; node = node.Plans?.[0]) nodes.push(node);
      const name = (n: PlanNode): string =>
        `${n['Node Type']}${n['Scan Direction'] === 'Backward' ? ' Backward' : ''}${n['Index Name'] ? ` using ${n['Index Name']}` : ''}`;
      const estimated = (nodes.find((n) => n['Node Type'].endsWith('Scan')) ?? top)['Plan Rows'];
      const stale = state.startsWith('before') && estimated * 10 > actual ? 'WARNING: statistics not stale: ' : '';
      lines.push(
        `${stale}${state}, ${shape}: ${nodes.map(name).join(' > ')}; the account's rows: ${fmt(estimated)} estimated, ${fmt(actual)} actual; ${fmt(ms, 2)} ms`,
      );
    }
    return lines.join('\n  ');
  };
  const analyze = async (): Promise<void> => {
    await db.query('ANALYZE verifications');
    await db.query('ALTER TABLE verifications RESET (autovacuum_enabled)');
  };
  const request: ApiGet = { path: `${LIST_PATH}?limit=20`, secret: benchSecret(IMPORT_ACCOUNT) };
  return { request, explain, analyze };
}
