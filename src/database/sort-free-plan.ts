import type { EntityManager } from 'typeorm';

/**
 * Runs `work` (statements of the caller's transaction) with sorting and JIT off, then puts both
 * back as they were. For a statement whose steps are `ORDER BY … LIMIT 1` walks that only one index
 * serves in that order: with statistics that have not seen the rows it walks (a backlog appears
 * long before autovacuum re-analyzes a table of millions of rows), PostgreSQL estimates one row for
 * another partial index and sorts what it scans there, every step: 2.3–3.2 s a pass instead of
 * 10–40 ms on a year of data (docs/performance.md). Sorting off leaves the ordered index the only
 * plan without a penalty; JIT off, because that penalty's cost would otherwise make PostgreSQL
 * compile the plan (0.4 s). PostgreSQL has no per-statement planner hint, hence set_config in SQL.
 */
export async function withSortFreePlan<T>(manager: EntityManager, work: () => Promise<T>): Promise<T> {
  const [was] = (await manager.query(SORT_FREE_PLAN_SQL.pin)) as { sort: string; jit: string }[];
  const result = await work();
  await manager.query(SORT_FREE_PLAN_SQL.restore, [was?.sort ?? 'on', was?.jit ?? 'on']);
  return result;
}

export const SORT_FREE_PLAN_SQL = {
  pin: `SELECT current_setting('enable_sort') AS sort, current_setting('jit') AS jit,
          set_config('enable_sort', 'off', true), set_config('jit', 'off', true)`,
  restore: `SELECT set_config('enable_sort', $1, true), set_config('jit', $2, true)`,
};
