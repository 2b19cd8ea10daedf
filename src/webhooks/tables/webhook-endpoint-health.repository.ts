import type { DataSource, EntityManager } from 'typeorm';

/** The endpoint's health, as the routes show it and the disable decision reads it. */
export interface EndpointHealth {
  lastSuccessAt: Date | null;
  lastFailureAt: Date | null;
  failingSince: Date | null;
  consecutiveFailures: number;
}

export const NO_HEALTH: EndpointHealth = {
  lastSuccessAt: null,
  lastFailureAt: null,
  failingSince: null,
  consecutiveFailures: 0,
};

const HEALTH_COLUMNS = `last_success_at AS "lastSuccessAt", last_failure_at AS "lastFailureAt",
  failing_since AS "failingSince", consecutive_failures AS "consecutiveFailures"`;

/** The account's `failing_since` (null when healthy or never attempted), as a select-list expression over `accountId`. */
export function failingSinceOf(accountId: string): string {
  return `(SELECT h.failing_since FROM webhook_endpoint_health h WHERE h.account_id = ${accountId})`;
}

/**
 * A healthy endpoint's `last_success_at` is rewritten once it is this far behind: a busy account's
 * deliveries would otherwise all queue on its one health row.
 */
export const SUCCESS_RESOLUTION = `interval '1 second'`;

/**
 * The upsert, for the caller's CTE, that folds the recorded attempts of `attempts` (columns
 * account_id, at, error — null on success) into each account's health: one row per account per
 * statement, written in account order so that two statements never deadlock on them. Within the
 * statement, the failures after its last success count; a statement without a success adds its
 * failures to the stored count and keeps an earlier `failing_since`. An account that only had
 * successes, on an endpoint already healthy whose `last_success_at` is less than a second old, is
 * left alone (read without a lock): the row is written on every failure, on the first success
 * after one, and at most about once a second while all goes well.
 */
export function recordHealthSql(attempts: string): string {
  return `INSERT INTO webhook_endpoint_health AS h (account_id, last_success_at, last_failure_at, failing_since, consecutive_failures)
  SELECT s.account_id, max(s.at) FILTER (WHERE s.error IS NULL), max(s.at) FILTER (WHERE s.error IS NOT NULL),
         min(s.at) FILTER (WHERE s.error IS NOT NULL AND s.at > coalesce(s.last_ok, '-infinity')),
         count(*) FILTER (WHERE s.error IS NOT NULL AND s.at > coalesce(s.last_ok, '-infinity'))
    FROM (SELECT a.account_id, a.at, a.error, max(a.at) FILTER (WHERE a.error IS NULL) OVER (PARTITION BY a.account_id) AS last_ok
            FROM ${attempts} a) s
    LEFT JOIN webhook_endpoint_health cur ON cur.account_id = s.account_id
   GROUP BY s.account_id, cur.account_id, cur.consecutive_failures, cur.last_success_at
  HAVING cur.account_id IS NULL OR cur.consecutive_failures > 0 OR cur.last_success_at IS NULL
      OR count(*) FILTER (WHERE s.error IS NOT NULL) > 0
      OR max(s.at) FILTER (WHERE s.error IS NULL) >= cur.last_success_at + ${SUCCESS_RESOLUTION}
   ORDER BY s.account_id
  ON CONFLICT (account_id) DO UPDATE SET
    last_success_at = greatest(h.last_success_at, excluded.last_success_at),
    last_failure_at = greatest(h.last_failure_at, excluded.last_failure_at),
    failing_since = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.failing_since
                         ELSE coalesce(h.failing_since, excluded.failing_since) END,
    consecutive_failures = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.consecutive_failures
                                ELSE h.consecutive_failures + excluded.consecutive_failures END`;
}

/** Every statement on `webhook_endpoint_health`; the attempts' writes are `recordHealthSql`, composed by the delivery store. */
export class WebhookEndpointHealthRepository {
  constructor(private readonly dataSource: DataSource) {}

  async of(accountId: string, manager: EntityManager = this.dataSource.manager): Promise<EndpointHealth> {
    const [row] = (await manager.query(`SELECT ${HEALTH_COLUMNS} FROM webhook_endpoint_health WHERE account_id = $1`, [
      accountId,
    ])) as EndpointHealth[];
    return row ?? NO_HEALTH;
  }

  /** A new URL: the endpoint's health starts afresh. */
  async reset(manager: EntityManager, accountId: string): Promise<void> {
    await manager.query(`DELETE FROM webhook_endpoint_health WHERE account_id = $1`, [accountId]);
  }
}
