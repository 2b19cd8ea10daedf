import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/** A node of `EXPLAIN (ANALYZE, FORMAT JSON)`: the fields the plan specs read. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/** A statement of sql/, without its first line (the header). */
export function statementOf(file: string): string {
  const text = readFileSync(join(__dirname, '..', '..', 'sql', ...file.split('/')), 'utf8');
  return text.slice(text.indexOf('\n') + 1);
}

/** A statement of sql/ run under EXPLAIN ANALYZE, after `before` (other files of sql/) in its transaction: the plan's nodes. */
export async function explained(
  url: string,
  file: string,
  values: unknown[],
  before: string[] = [],
): Promise<PlanNode[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    for (const other of before) await client.query(statementOf(other));
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${statementOf(file)}`,
      values,
    );
    return nodesOf(rows[0]['QUERY PLAN'][0].Plan);
  } finally {
    await client.query('ROLLBACK');
    await client.end();
  }
}

/** Rows the scans of `relation` read: those they returned and those they read and threw away. */
export const rowsRead = (nodes: PlanNode[], relation: string): number =>
  nodes
    .filter((node) => node['Relation Name'] === relation)
    .reduce((sum, node) => sum + node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Filter'] ?? 0), 0);
