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
 * The upsert, for the caller's CTE, that folds the recorded attempts of `attempts` (columns
 * account_id, at, error — null on success) into each account's health: one row per account per
 * statement, written in account order so that two statements never deadlock on them. Within the
 * statement, the failures after its last success count; a statement without a success adds its
 * failures to the stored count and keeps an earlier `failing_since`.
 */
export function recordHealthSql(attempts: string): string {
  return `INSERT INTO webhook_endpoint_health AS h (account_id, last_success_at, last_failure_at, failing_since, consecutive_failures)
  SELECT account_id, max(at) FILTER (WHERE error IS NULL), max(at) FILTER (WHERE error IS NOT NULL),
         min(at) FILTER (WHERE error IS NOT NULL AND at > coalesce(last_ok, '-infinity')),
         count(*) FILTER (WHERE error IS NOT NULL AND at > coalesce(last_ok, '-infinity'))
    FROM (SELECT a.account_id, a.at, a.error, max(a.at) FILTER (WHERE a.error IS NULL) OVER (PARTITION BY a.account_id) AS last_ok
            FROM ${attempts} a) s
   GROUP BY account_id ORDER BY account_id
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
