import type { DataSource } from 'typeorm';

/**
 * How far the most delayed standby replays behind the primary, in ms; 0 without a standby. Read on
 * the primary from pg_stat_replication: replay_lag is null for a standby that has caught up and for a
 * role without pg_monitor (then the lag is not seen, and counts as none).
 */
export async function standbyLagMs(dataSource: DataSource): Promise<number> {
  const rows: { lag_ms: number | null }[] = await dataSource.query(
    'SELECT max(extract(epoch FROM replay_lag) * 1000)::float8 AS lag_ms FROM pg_stat_replication',
  );
  return rows[0]?.lag_ms ?? 0;
}
