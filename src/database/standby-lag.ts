import type { DataSource } from 'typeorm';

/**
 * How far the most delayed physical standby replays behind the primary, in ms; 0 without one. Read on
 * the primary from pg_stat_replication, without logical walsenders (a subscriber's apply is not a
 * standby): replay_lag is null for a standby that has caught up and for a role without pg_monitor
 * (then the lag is not seen, and counts as none).
 */
export async function standbyLagMs(dataSource: DataSource): Promise<number> {
  const rows: { lag_ms: number | null }[] = await dataSource.query(
    `SELECT max(extract(epoch FROM r.replay_lag) * 1000)::float8 AS lag_ms FROM pg_stat_replication r
      WHERE NOT EXISTS (SELECT FROM pg_replication_slots s WHERE s.active_pid = r.pid AND s.slot_type = 'logical')`,
  );
  return rows[0]?.lag_ms ?? 0;
}
