import type { CommitProbe } from 'src/database/in-doubt';
import type { DataSource, EntityManager } from 'typeorm';
import { activeSecretCiphertextsOf } from 'src/accounts/account-secret.repository';
import { webhookUrlOf } from 'src/accounts/account.repository';
import { parseCommaList } from 'src/common/comma-list';
import {
  type KeysetBounds,
  type KeysetFilter,
  type KeysetSort,
  type PageSql,
  filter,
  whereClauses,
} from 'src/common/keyset-list';
import { SqlParams } from 'src/common/sql-params';
import type { PgPool } from 'src/database/pg-pool';
import { onReplica } from 'src/database/read-replica';
import { withSortFreePlan } from 'src/database/sort-free-plan';
import {
  type DeliveryJobSource,
  type EventForJob,
  type Promotion,
  type StreamRead,
  type StoredEventBody,
  type StreamedEvent,
  deliveryJobSource,
} from 'src/webhooks/tables/event-rows';
import { promotionLocks } from 'src/webhooks/tables/promotion-locks';
import { endpointStateOf, heldGateSql } from 'src/webhooks/tables/webhook-endpoint.repository';
import { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';

const COLUMNS = `id, account_id AS "accountId", verification_id AS "verificationId", type, body, created_at AS "createdAt",
  delivery_status AS "deliveryStatus", attempt_count AS "attemptCount", cycle, cycle_attempts AS "cycleAttempts",
  last_attempt_at AS "lastAttemptAt", last_response_status AS "lastResponseStatus", last_error AS "lastError",
  next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt"`;
type ColumnValue = (event: WebhookEvent) => string | Date | null;
type EventRef = { eventId: string; cycle: number };

/** The columns an outbox insert writes, in its order; the others take their defaults. */
const INSERTED: readonly (readonly [string, string, ColumnValue])[] = [
  ['id', 'uuid', (e) => e.id],
  ['account_id', 'uuid', (e) => e.accountId],
  ['verification_id', 'uuid', (e) => e.verificationId],
  ['type', 'varchar', (e) => e.type],
  ['body', 'text', (e) => e.body],
  ['created_at', 'timestamptz', (e) => e.createdAt],
  ['delivery_status', 'varchar', (e) => e.deliveryStatus],
  ['last_error', 'varchar', (e) => e.lastError],
  ['next_attempt_at', 'timestamptz', (e) => e.nextAttemptAt],
];

const INSERT_INTO = `INSERT INTO webhook_events (${INSERTED.map(([column]) => column).join(', ')})`;

/** The insert of the rows `v` (one column per INSERTED, by name): an event of an account whose
 * endpoint is disabled is written `held`, with no due time (see heldGateSql). */
function insertGated(v: string): string {
  const gated: Record<string, string> = {
    delivery_status: `CASE WHEN g.held THEN 'held' ELSE v.delivery_status END`,
    next_attempt_at: `CASE WHEN g.held THEN NULL ELSE v.next_attempt_at END`,
  };
  const columns = INSERTED.map(([column]) => gated[column] ?? `v.${column}`);
  return `${INSERT_INTO} SELECT ${columns.join(', ')}
    FROM ${v} LEFT JOIN LATERAL (${heldGateSql('v.account_id', 'v.delivery_status')}) g ON true`;
}

/** The webhook_events rows `rows` as the queue reads them (`deliveryJobSource`), with the given extra
 * columns of `e`: for the sweeper, redeliveries and releases. */
function jobSourcesFrom(rows: string, extra?: string): string {
  return `SELECT e.id, e.cycle, e.type, e.account_id AS "accountId", e.verification_id AS "verificationId", e.body,
  ${webhookUrlOf('e.account_id')} AS "webhookUrl"${extra ? `, ${extra}` : ''}
  FROM ${rows} e`;
}

/** Rows selected by `jobSourcesFrom`, as the jobs to queue (with their extra columns). */
const jobSources = <Extra extends object>(rows: (EventForJob & Extra)[]): (DeliveryJobSource & Extra)[] =>
  rows.map((row) => ({ ...row, ...deliveryJobSource(row) }));

/** A fresh delivery cycle: the full schedule again, same id and body; attempt_count keeps counting. Due now,
 * or waiting its turn (no due time until `promoteWaiting` gives it one). */
const NEW_CYCLE = `delivery_status = 'pending', cycle = cycle + 1, cycle_attempts = 0, next_attempt_at = now()`;
const NEW_CYCLE_WAITING = NEW_CYCLE.replace('now()', 'NULL');

// `<> 'pending'`, not IN (…): webhook_events_retention_idx's predicate. A held event waits for its endpoint: never deleted.
const AGED_EVENTS = `delivery_status <> 'pending' AND delivery_status <> 'held' AND created_at < now() - make_interval(days => $1)`;

/** Whether the event `id` (in `cycle` or a later one) is committed: a write that created it, or started that
 * cycle, whose answer was lost, did commit. */
export function eventCommitted(id: string, cycle = 1): CommitProbe {
  return async (query) =>
    (await query('SELECT 1 FROM webhook_events WHERE id = $1 AND cycle >= $2', [id, cycle])).length > 0;
}

/** Whether a Promote of the event `id`'s `cycle` holds, committed or not: the cycle no longer waits for a later attempt. */
export function promoteHolds(id: string, cycle: number): CommitProbe {
  const sql = `SELECT 1 FROM webhook_events WHERE id = $1 AND NOT (cycle = $2 AND delivery_status = 'pending' AND next_attempt_at > now())`;
  return async (query) => (await query(sql, [id, cycle])).length > 0;
}

/** `INSERT INTO webhook_events … SELECT … FROM <source>` with an event's columns as the parameters
 * $first, $first + 1, …, bound to `outboxEventValues(event)`: a statement for the caller's CTE that
 * writes the event once per row of `source`, so it commits with the change that produced it, in the
 * same round trip, or not at all. One text for every event, so the statement can be prepared once. */
export function insertOutboxEventFrom(source: string, first: number): string {
  const values = INSERTED.map(([column, type], i) => `$${first + i}::${type} AS ${column}`);
  return insertGated(`(SELECT ${values.join(', ')} FROM ${source}) v`);
}

/** The parameters of `insertOutboxEventFrom`, in its order. */
export function outboxEventValues(event: WebhookEvent): (string | Date | null)[] {
  return INSERTED.map(([, , value]) => value(event));
}

/** `INSERT INTO webhook_events … SELECT … FROM unnest(…)`: many built events in one statement. */
export function insertOutboxEvents(events: WebhookEvent[], params: SqlParams): string {
  const arrays = INSERTED.map(([, type, value]) => `${params.add(events.map((event) => value(event)))}::${type}[]`);
  return insertGated(`unnest(${arrays.join(', ')}) AS v(${INSERTED.map(([column]) => column).join(', ')})`);
}

/** Whether the account `accountId` has events in `status`, as an EXISTS condition (the unsettled endpoints). */
export const anyEventsIn = (accountId: string, status: 'held' | 'pending') =>
  `EXISTS (SELECT 1 FROM webhook_events x WHERE x.account_id = ${accountId} AND x.delivery_status = '${status}')`;

/** Whether the account `accountId` has released events waiting their turn (pending, no due time), as an expression. */
export const waitingEventsOf = (accountId: string): string =>
  `EXISTS (SELECT 1 FROM webhook_events x WHERE x.account_id = ${accountId} AND x.delivery_status = 'pending' AND x.next_attempt_at IS NULL)`;

/** The delivery log is newest first, and has no sort parameter. */
export const NEWEST_FIRST: KeysetSort<WebhookEvent> = {
  column: 'created_at',
  direction: 'DESC',
  at: (row) => row.createdAt,
};

export function verificationFilter(verificationId: string | undefined): KeysetFilter {
  return filter('verificationId', verificationId, (id, params) => `verification_id = ${params.add(id)}`);
}

/**
 * `delivery_status` as a comma list (the delivery log's filter and the bulk replay's), whatever the statistics
 * and however the events lie in time: one ordered walk of (account_id, delivery_status, created_at, id) per
 * status, merged (`= ANY` cannot be read from that index in created_at order). `filter` binds the cursor to the
 * statuses; `merge(inner, order, limit)` runs `inner` (with the filter's condition) once per status, or alone.
 */
export function deliveryStatusWalk(raw: string | undefined) {
  let statuses: string | undefined; // the list's parameter, once the WHERE is built
  const byStatus = filter('statuses', parseCommaList(raw), (list, params) => {
    statuses = params.add(list);
    return 'delivery_status = wanted.status';
  });
  const merge = (inner: string, order: string, limit: string) =>
    statuses === undefined
      ? inner
      : `SELECT e.* FROM unnest(${statuses}::varchar[]) AS wanted(status) CROSS JOIN LATERAL (${inner}) e ${order} LIMIT ${limit}`;
  return { filter: byStatus, merge };
}

/** A delivery-log page's statement (newest first), around the WHERE, ORDER BY and LIMIT keysetList built. */
export function deliveryLogPageSql(walk: ReturnType<typeof deliveryStatusWalk>): (page: PageSql) => string {
  return (page) =>
    walk.merge(
      `SELECT ${COLUMNS} FROM webhook_events WHERE ${page.where} ${page.orderBy} LIMIT ${page.limit}`,
      'ORDER BY e."createdAt" DESC, e.id DESC',
      page.limit,
    );
}

/** The select of due events by id ($1, a uuid[]) with `accountColumns`, the caller's select-list
 * items over the account id `e.account_id`: one round trip for what a delivery needs. */
export function dueEventsSql(accountColumns: (accountId: string) => string): string {
  return `
SELECT e.id, e.account_id AS "accountId", e.body, e.created_at AS "createdAt", e.delivery_status AS "deliveryStatus",
       e.cycle, e.cycle_attempts AS "cycleAttempts", e.next_attempt_at AS "nextAttemptAt", e.last_error AS "lastError",
       ${accountColumns('e.account_id')}
  FROM webhook_events e
 WHERE e.id = ANY($1::uuid[])`;
}

/** The update of each event an attempt of `input` (id, cycle, at, response_status, error, status, next_attempt_at,
 * duration_ms, response_body, url, n) is for, if still in that cycle, pending or held (an attempt in flight when the
 * endpoint was disabled is logged; the event stays held unless it delivered). `movedOf`: whether the attempt's url is
 * no longer the account's (a 410 then becomes a retry due now; `moved` leaves the endpoint alone). Returns the id, new
 * attempt_count, the attempt's columns and `held`; an attempt in flight during a redaction keeps no response excerpt. */
export function recordAttemptsSql(input: string, movedOf: (accountId: string) => string): string {
  const moved = movedOf('e.account_id');
  return `UPDATE webhook_events e
     SET attempt_count = e.attempt_count + 1, cycle_attempts = e.cycle_attempts + 1,
         last_attempt_at = i.at, last_response_status = i.response_status, last_error = i.error,
         delivery_status = CASE WHEN e.delivery_status = 'held' AND i.status <> 'delivered' THEN 'held'
                                WHEN i.status = 'held' AND ${moved} THEN 'pending' ELSE i.status END,
         next_attempt_at = CASE WHEN e.delivery_status = 'held' AND i.status <> 'delivered' THEN NULL
                                WHEN i.status = 'held' AND ${moved} THEN i.at ELSE i.next_attempt_at END,
         delivered_at = CASE WHEN i.status = 'delivered' THEN now() ELSE e.delivered_at END
    FROM ${input} i
   WHERE e.id = i.id AND e.cycle = i.cycle AND e.delivery_status IN ('pending', 'held')
  RETURNING e.id, e.account_id, e.attempt_count, i.at, i.response_status, i.duration_ms, i.error,
            CASE WHEN e.redacted_at IS NULL THEN i.response_body END AS response_body, i.n, ${moved} AS moved,
            e.delivery_status = 'held' AS held`;
}

/** The update, for the caller's CTE, that rewrites each event's body and sets its `redacted_at`; `ids` is their placeholder. */
export function rewriteEventBodiesSql(ids: string, events: { body: string; at: Date }[], params: SqlParams): string {
  return `UPDATE webhook_events e SET body = r.body, redacted_at = r.at
      FROM unnest(${ids}::uuid[], ${params.add(events.map((event) => event.body))}::text[],
                  ${params.add(events.map((event) => event.at))}::timestamptz[]) AS r(id, body, at)
     WHERE e.id = r.id`;
}

/** Every statement on `webhook_events`. Methods take the caller's transaction where they are part of one, or return a
 * fragment (SQL and its parameters' order) the caller composes into one statement: outbox inserts, the worker's load. */
export class WebhookEventRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly pool: PgPool,
  ) {}

  /** An event that belongs to no statement of the caller's (a test event). */
  async insert(event: WebhookEvent, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.getRepository(WebhookEvent).insert(event);
  }

  // The delivery log.

  /** Runs a `pageSql` statement on a replica. */
  readPage(sql: string, values: unknown[]): Promise<WebhookEvent[]> {
    return onReplica(this.dataSource, (manager) => manager.query(sql, values));
  }

  /** One event of one account, in the caller's read (a replica's). */
  findForAccount(manager: EntityManager, accountId: string, id: string): Promise<WebhookEvent | null> {
    return manager.getRepository(WebhookEvent).findOneBy({ id, accountId });
  }

  // New delivery cycles and due times.

  /** A new cycle for the account's event, read back as its job and its row; none when there is no such event. */
  startCycleForAccount(manager: EntityManager, accountId: string, id: string) {
    return this.startCycles<WebhookEvent>(manager, 'id = $1 AND account_id = $2', [id, accountId], COLUMNS);
  }

  /** A new cycle for each of the events (any account's) whose endpoint is not disabled, as the jobs to queue. */
  startCyclesOf(manager: EntityManager, ids: string[]): Promise<DeliveryJobSource[]> {
    return this.startCycles(
      manager,
      `id = ANY($1::uuid[]) AND NOT EXISTS (${heldGateSql('webhook_events.account_id', "'pending'")})`,
      [ids],
    );
  }

  /** Of the events `ids`, those whose account's endpoint is disabled, with the reason. */
  async withDisabledEndpoint(ids: string[]): Promise<Map<string, string>> {
    const sql = `SELECT e.id, ${endpointStateOf('e.account_id')} FROM webhook_events e WHERE e.id = ANY($1::uuid[])`;
    const rows = (await this.dataSource.query(sql, [ids])) as { id: string; disabledReason: string | null }[];
    return new Map(rows.flatMap((row) => (row.disabledReason ? [[row.id, row.disabledReason] as const] : [])));
  }

  /** A new cycle for up to `limit` of the account's events in `statuses` (a comma list) and `bounds`, oldest first,
   * skipping rows another transaction holds; the cycles wait their turn, as released events do (`promoteWaiting`). */
  startWaitingCyclesMatching(
    manager: EntityManager,
    accountId: string,
    statuses: string | undefined,
    bounds: KeysetBounds[],
    limit: number,
  ): Promise<{ id: string }[]> {
    const params = new SqlParams();
    const walk = deliveryStatusWalk(statuses);
    const where = whereClauses(params, accountId, [walk.filter], bounds).join(' AND ');
    const n = params.add(limit);
    const oldest = `SELECT id, created_at FROM webhook_events WHERE ${where}
                     ORDER BY created_at, id LIMIT ${n} FOR UPDATE SKIP LOCKED`;
    return manager.query(
      `WITH picked AS (${walk.merge(oldest, 'ORDER BY e.created_at, e.id', n)}),
       e AS (UPDATE webhook_events SET ${NEW_CYCLE_WAITING} WHERE id IN (SELECT id FROM picked) RETURNING id)
       SELECT id FROM e`,
      params.values,
    ) as Promise<{ id: string }[]>;
  }

  private async startCycles<Extra extends object = object>(
    manager: EntityManager,
    where: string,
    values: unknown[],
    extra?: string,
  ): Promise<(DeliveryJobSource & Extra)[]> {
    const sql = `WITH e AS (UPDATE webhook_events SET ${NEW_CYCLE} WHERE ${where} RETURNING *) ${jobSourcesFrom('e', extra)}`;
    return jobSources((await manager.query(sql, values)) as (EventForJob & Extra)[]);
  }

  /** Pending events' next attempts due `now` (Promote, the relay), or `waiting` their turn as `park` leaves one. */
  async setDue(refs: EventRef[], due: 'now' | 'waiting', manager = this.dataSource.manager): Promise<void> {
    if (refs.length === 0) return;
    await manager.query(
      `UPDATE webhook_events e SET next_attempt_at = ${due === 'now' ? 'now()' : 'NULL'}
         FROM unnest($1::uuid[], $2::integer[]) AS r(id, cycle)
        WHERE e.id = r.id AND e.cycle = r.cycle AND e.delivery_status = 'pending' AND e.next_attempt_at IS NOT NULL`,
      [refs.map((ref) => ref.eventId), refs.map((ref) => ref.cycle)],
    );
  }

  /** Up to `limit` events `overdueSeconds` late (caller's transaction), each late account's equal share; sort-free. */
  async overdue(manager: EntityManager, overdueSeconds: number, limit: number): Promise<DeliveryJobSource[]> {
    const due = `w.delivery_status = 'pending' AND w.next_attempt_at IS NOT NULL`;
    const cutoff = `now() - make_interval(secs => $1)`;
    const next = (after: string) => `SELECT w.account_id FROM webhook_events w WHERE ${due}${after} ORDER BY 1 LIMIT 1`;
    const step = (account: string, from: string) => `LATERAL (SELECT w.account_id, w.next_attempt_at AS at, w.id
      FROM webhook_events w WHERE ${due} AND (w.account_id, w.next_attempt_at, w.id) ${from}
       AND (w.account_id, w.next_attempt_at) < (${account}, ${cutoff}) ORDER BY 1, 2, 3 LIMIT 1) f`;
    const sql = `WITH RECURSIVE due_accounts(id) AS ((${next(` AND EXISTS (SELECT FROM webhook_events o WHERE o.delivery_status = 'pending' AND o.next_attempt_at < ${cutoff})`)}) UNION ALL
         SELECT (${next(' AND w.account_id > a.id')}) FROM due_accounts a WHERE a.id IS NOT NULL),
       late AS (SELECT f.* FROM due_accounts a, ${step('a.id', ">= (a.id, '-infinity', '00000000-0000-0000-0000-000000000000')")}),
       walk(account_id, at, id, n) AS (SELECT *, 1 FROM late UNION ALL
         SELECT f.*, walk.n + 1 FROM walk, ${step('walk.account_id', '> (walk.account_id, walk.at, walk.id)')}
          WHERE walk.n < $2::float8 / (SELECT count(*) FROM late))
       ${jobSourcesFrom('(SELECT * FROM webhook_events WHERE id = ANY (ARRAY(SELECT id FROM walk ORDER BY at LIMIT $2)))')} ORDER BY e.next_attempt_at`;
    return withSortFreePlan(manager, async () => jobSources(await manager.query(sql, [overdueSeconds, limit])));
  }

  /** Pending events counted up to `cap` each, due and waiting their turn (as cheap with a million), and the oldest due's seconds due (0 if none). */
  async backlog(cap: number): Promise<{ count: number; oldestDueSeconds: number; waiting: number }> {
    const [pending, due] = [`FROM webhook_events WHERE delivery_status = 'pending' AND next_attempt_at`, '<= now()'];
    const sql = `SELECT (SELECT count(*)::int FROM (SELECT 1 ${pending} ${due} LIMIT $1) d) AS count, COALESCE((SELECT EXTRACT(EPOCH
         FROM now() - next_attempt_at) ${pending} ${due} ORDER BY next_attempt_at LIMIT 1), 0)::float8 AS "oldestDueSeconds",
         (SELECT count(*)::int FROM (SELECT 1 ${pending} IS NULL LIMIT $1) w) AS waiting`;
    return (
      (await this.dataSource.query(sql, [cap])) as { count: number; oldestDueSeconds: number; waiting: number }[]
    )[0];
  }

  /** The event's cycle fails with `error` and no attempt, if it is still pending. */
  async failCycle(event: { id: string; cycle: number }, error: string): Promise<void> {
    const sql = `UPDATE webhook_events SET delivery_status = 'failed', last_error = $3, next_attempt_at = NULL
      WHERE id = $1 AND cycle = $2 AND delivery_status = 'pending'`;
    await this.pool.query(sql, [event.id, event.cycle, error]);
  }

  // The endpoint's held and released events (see EndpointLifecycle).

  /** One batch of an endpoint change (the caller locked the endpoint): the `limit` oldest held events released
   * (fresh cycles waiting their turn: see `promoteWaiting`) or pending ones held; a locked row is skipped. */
  async settleBatch(manager: EntityManager, accountId: string, to: 'released' | 'held', limit: number) {
    const [set, from] =
      to === 'held' ? [`delivery_status = 'held', next_attempt_at = NULL`, 'pending'] : [NEW_CYCLE_WAITING, 'held'];
    const [, count] = (await manager.query(
      `UPDATE webhook_events SET ${set}
        WHERE id = ANY (ARRAY(SELECT id FROM webhook_events WHERE account_id = $1 AND delivery_status = $2
                               ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED))`,
      [accountId, from, limit],
    )) as [unknown, number];
    return count;
  }

  /** The worker's wait: the event's due attempt waits its turn (no due time; `promoteWaiting`), if it is still due. */
  async park(event: { id: string; cycle: number }): Promise<boolean> {
    const sql = `UPDATE webhook_events SET next_attempt_at = NULL
      WHERE id = $1 AND cycle = $2 AND delivery_status = 'pending' AND next_attempt_at IS NOT NULL RETURNING 1`;
    return ((await this.pool.query(sql, [event.id, event.cycle])) as unknown[]).length > 0;
  }

  /** The worker's hold: the event's cycle becomes held if still pending and its account's endpoint is disabled
   * (locked as the outbox insert locks it). False when not: the endpoint was enabled, or the event moved on. */
  async holdIfDisabled(event: { id: string; cycle: number; accountId: string }): Promise<boolean> {
    const sql = `UPDATE webhook_events SET delivery_status = 'held', next_attempt_at = NULL
      WHERE id = $1 AND cycle = $2 AND delivery_status = 'pending' AND EXISTS (${heldGateSql('$3::uuid', "'pending'")}) RETURNING 1`;
    return ((await this.pool.query(sql, [event.id, event.cycle, event.accountId])) as unknown[]).length > 0;
  }

  /** Makes each account's oldest waiting events due, as many as keep its due ones at `cap`, in the caller's transaction
   * `tx`. One promotion per account at a time (advisory locks taken in one order); `ifFree` passes over (`busy`) an
   * account whose promotion is under way rather than wait. Sort-free; many accounts, one statement. */
  async promoteWaiting(tx: EntityManager, ids: string[], cap: number, ifFree = false): Promise<Promotion> {
    const [{ locked }] = (await tx.query(promotionLocks(ifFree), [ids])) as { locked: string[] }[];
    const busy = ids.filter((id) => !locked.includes(id));
    if (locked.length === 0) return { jobs: [], busy };
    const sql = `WITH acc AS (SELECT DISTINCT a FROM unnest($1::uuid[]) AS a),
       next AS (SELECT n.id FROM acc CROSS JOIN LATERAL (
         SELECT id FROM webhook_events WHERE account_id = acc.a AND delivery_status = 'pending' AND next_attempt_at IS NULL
          ORDER BY created_at, id LIMIT greatest(0, $2::int - (SELECT count(*)::int FROM (SELECT FROM webhook_events
            WHERE delivery_status = 'pending' AND next_attempt_at IS NOT NULL AND (account_id, next_attempt_at) >= (acc.a, '-infinity')
              AND (account_id, next_attempt_at) <= (acc.a, statement_timestamp()) ORDER BY account_id, next_attempt_at LIMIT $2::int) d))
          FOR UPDATE) n),
       e AS (UPDATE webhook_events w SET next_attempt_at = now() WHERE w.id = ANY (ARRAY(SELECT id FROM next)) RETURNING w.*)
       ${jobSourcesFrom('e')} ORDER BY e.created_at, e.id`;
    const rows = await withSortFreePlan(tx, () => tx.query(sql, [locked, cap]));
    return { jobs: jobSources(rows as EventForJob[]), busy };
  }

  /** Accounts with events waiting their turn, after `after` in id order, for the sweeper: a skip scan, one probe per account. */
  async accountsWithWaiting(limit: number, after: string): Promise<string[]> {
    const next = (above: string) => `(SELECT w.account_id FROM webhook_events w WHERE w.delivery_status = 'pending'
        AND w.next_attempt_at IS NULL AND w.account_id > ${above} ORDER BY 1 LIMIT 1)`;
    const sql = `WITH RECURSIVE a(id) AS (${next('$2')} UNION ALL SELECT ${next('a.id')} FROM a WHERE a.id IS NOT NULL)
      SELECT id AS "accountId" FROM a WHERE id IS NOT NULL LIMIT $1`;
    return ((await this.dataSource.query(sql, [limit, after])) as { accountId: string }[]).map((row) => row.accountId);
  }

  /** How many of the account's events are held. */
  async countHeld(accountId: string): Promise<number> {
    const sql = `SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1 AND delivery_status = 'held'`;
    return ((await this.dataSource.query(sql, [accountId])) as { n: number }[])[0].n;
  }

  // Redaction.

  /** The bodies of every event of the given verifications (of the given accounts), locked in id order so two
   * erasures cannot deadlock each other (test/retention.e2e-spec.ts finds workers waiting on it by its text). */
  lockBodiesOf(manager: EntityManager, accountIds: string[], verificationIds: string[]): Promise<StoredEventBody[]> {
    const sql = `SELECT id, verification_id AS "verificationId", body FROM webhook_events
      WHERE account_id = ANY($1::uuid[]) AND verification_id = ANY($2::uuid[]) ORDER BY id FOR UPDATE`;
    return manager.query(sql, [accountIds, verificationIds]);
  }

  /** The event stream's read, on the primary: up to `limit` events the stream owes (StreamWindow), oldest first. */
  streamPage(accountId: string, read: StreamRead, limit: number): Promise<StreamedEvent[]> {
    return this.pool.query<StreamedEvent>(
      `SELECT id, type, created_at AS "createdAt", body, ${activeSecretCiphertextsOf('$1::uuid')} AS "secretCiphertexts"
         FROM webhook_events WHERE account_id = $1 AND (created_at, id) > ($2, $3) AND created_at >= $4
          AND id <> ALL($5::uuid[]) ORDER BY created_at, id LIMIT $6`,
      [accountId, read.floor.at, read.floor.id, read.from, read.sent, limit],
    );
  }

  /** Of `accountIds`, those with an event created from `from` on: the streams' safety re-read (one per process). */
  async withEventsSince(accountIds: string[], from: Date): Promise<string[]> {
    const sql = `SELECT a.id FROM unnest($1::uuid[]) a(id) WHERE EXISTS
      (SELECT 1 FROM webhook_events e WHERE e.account_id = a.id AND e.created_at >= $2)`;
    return (await this.pool.query<{ id: string }>(sql, [accountIds, from])).map((row) => row.id);
  }

  // Retention.

  /** Deletes up to `limit` finished (delivered or failed) events created over `days` ago, oldest first, with their
   * attempts; rows another transaction holds (a redelivery starting) are skipped, one now pending is kept. */
  async deleteFinishedOlderThan(days: number, limit: number): Promise<number> {
    const [row] = (await this.dataSource.query(
      `WITH aged AS (
         SELECT id FROM webhook_events WHERE ${AGED_EVENTS} ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
       deleted AS (
         DELETE FROM webhook_events e USING aged
          WHERE e.id = aged.id AND e.delivery_status <> 'pending' AND e.delivery_status <> 'held' RETURNING 1)
       SELECT count(*)::int AS count FROM deleted`,
      [days, limit],
    )) as { count: number }[];
    return row.count;
  }

  /** How many events `deleteFinishedOlderThan` would take now, over any number of calls. */
  async countFinishedOlderThan(days: number): Promise<number> {
    const sql = `SELECT count(*)::int AS count FROM webhook_events WHERE ${AGED_EVENTS}`;
    return ((await this.dataSource.query(sql, [days])) as { count: number }[])[0].count;
  }
}
