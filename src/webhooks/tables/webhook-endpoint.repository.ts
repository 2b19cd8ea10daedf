import type { DataSource, EntityManager } from 'typeorm';
import type { DisableReason } from 'src/webhooks/tables/webhook-endpoint.entity';

/** The endpoint's state as the routes and the worker read it. */
export interface EndpointState {
  disabledReason: DisableReason | null;
  disabledAt: Date | null;
}

const STATE_COLUMNS = `disabled_reason AS "disabledReason", disabled_at AS "disabledAt"`;

/**
 * The lateral subquery, for an event insert, that yields one row `(held = true)` when the account
 * `accountId` (an SQL expression of the outer row) has a disabled endpoint and the event would go
 * out (`status` is 'pending'), locking the endpoint row FOR KEY SHARE: an enable, which takes the
 * row FOR UPDATE, then waits for the insert to commit before it releases the held events, or the
 * insert waits for the enable and sees the endpoint enabled. An enabled endpoint matches no row and
 * takes no lock.
 */
export function heldGateSql(accountId: string, status: string): string {
  return `SELECT true AS held FROM webhook_endpoints w
           WHERE w.account_id = ${accountId} AND w.disabled_at IS NOT NULL AND ${status} = 'pending' FOR KEY SHARE`;
}

/** The endpoint's state columns (`"disabledReason"`, `"disabledAt"`) for the account `accountId`, as select-list items. */
export function endpointStateOf(accountId: string): string {
  return `(SELECT w.disabled_reason FROM webhook_endpoints w WHERE w.account_id = ${accountId}) AS "disabledReason",
          (SELECT w.disabled_at FROM webhook_endpoints w WHERE w.account_id = ${accountId}) AS "disabledAt"`;
}

/**
 * Every statement on `webhook_endpoints`. A missing row reads as enabled; the writes create it.
 * Disabling and enabling lock the row FOR UPDATE first (`lock`), in the caller's transaction, so
 * that they serialize with each other and with every statement that holds an event (see
 * `heldGateSql`).
 */
export class WebhookEndpointRepository {
  constructor(private readonly dataSource: DataSource) {}

  async state(accountId: string, manager: EntityManager = this.dataSource.manager): Promise<EndpointState> {
    const [row] = (await manager.query(`SELECT ${STATE_COLUMNS} FROM webhook_endpoints WHERE account_id = $1`, [
      accountId,
    ])) as EndpointState[];
    return row ?? { disabledReason: null, disabledAt: null };
  }

  /** The endpoint's state, its row created if need be and locked FOR UPDATE until the caller's transaction ends. */
  async lock(manager: EntityManager, accountId: string): Promise<EndpointState> {
    await manager.query(`INSERT INTO webhook_endpoints (account_id) VALUES ($1) ON CONFLICT (account_id) DO NOTHING`, [
      accountId,
    ]);
    const [row] = (await manager.query(
      `SELECT ${STATE_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 FOR UPDATE`,
      [accountId],
    )) as EndpointState[];
    return row;
  }

  /** Sets the endpoint's state (the row is locked by `lock`). */
  async set(manager: EntityManager, accountId: string, state: EndpointState): Promise<void> {
    await manager.query(`UPDATE webhook_endpoints SET disabled_reason = $2, disabled_at = $3 WHERE account_id = $1`, [
      accountId,
      state.disabledReason,
      state.disabledAt,
    ]);
  }

  /**
   * Accounts whose events do not match their endpoint's state yet (a release or a hold still going
   * on in batches): held events of an enabled endpoint, pending events of a disabled one. `anyIn`
   * is the events' EXISTS fragment (their repository's).
   */
  async unsettled(anyIn: (accountId: string, status: 'held' | 'pending') => string, limit: number): Promise<string[]> {
    const rows = (await this.dataSource.query(
      `SELECT account_id AS "accountId" FROM webhook_endpoints w
        WHERE (w.disabled_at IS NULL AND ${anyIn('w.account_id', 'held')})
           OR (w.disabled_at IS NOT NULL AND ${anyIn('w.account_id', 'pending')})
        LIMIT $1`,
      [limit],
    )) as { accountId: string }[];
    return rows.map((row) => row.accountId);
  }

  /** How many endpoints are disabled, by reason: the gauge. */
  async countDisabled(): Promise<Map<DisableReason, number>> {
    const rows = (await this.dataSource.query(
      `SELECT disabled_reason AS reason, count(*)::int AS count FROM webhook_endpoints
        WHERE disabled_reason IS NOT NULL GROUP BY disabled_reason`,
    )) as { reason: DisableReason; count: number }[];
    return new Map(rows.map((row) => [row.reason, row.count]));
  }
}
