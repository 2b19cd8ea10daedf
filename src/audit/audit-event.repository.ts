import type { DataSource, EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { auditEntryHash } from 'src/audit/audit-hash';
import { type AuditEventJson, type AuditEventRow, toAuditEventJson } from 'src/audit/audit-entry';
import { SqlParams } from 'src/common/sql-params';
import type { CommitProbe } from 'src/database/in-doubt';

const COLUMNS = `sequence, id, at, actor_type, actor_id, actor_name, actor_via, action, outcome, target_type,
  target_id, account_id, changes, request_id, source_ip, previous_hash, hash`;

/** An entry before the chain gives it its place: everything but sequence, at and the hashes (and its id, if the caller has none). */
export type AuditEntryDraft = Omit<AuditEventRow, 'sequence' | 'id' | 'at' | 'previous_hash' | 'hash'> & {
  id?: string;
};

/**
 * Whether the audit entry `id` is committed, staged or chained: the change it records committed with
 * it (commit-settler.ts), whichever write it was.
 */
export function auditEntryCommitted(id: string): CommitProbe {
  return async (query) =>
    (
      await query(
        `SELECT 1 FROM audit_pending WHERE entry_id = $1 UNION ALL SELECT 1 FROM audit_events WHERE id = $1 LIMIT 1`,
        [id],
      )
    ).length > 0;
}

/** The list route's filters, parsed. */
export interface AuditFilters {
  actorId?: string;
  actorTypes?: string[];
  actions?: string[];
  targetId?: string;
  accountId?: string;
  outcome?: string;
  from?: Date;
  to?: Date;
}

/** Where the chain starts now (after retention) and where it ends. */
export interface ChainHead {
  prunedThrough: number;
  lastSequence: number;
  lastHash: string;
}

function where(filters: AuditFilters, params: SqlParams): string[] {
  const clauses: string[] = [];
  if (filters.actorId !== undefined) clauses.push(`actor_id = ${params.add(filters.actorId)}`);
  if (filters.actorTypes) clauses.push(`actor_type = ANY(${params.add(filters.actorTypes)}::text[])`);
  if (filters.actions) clauses.push(`action = ANY(${params.add(filters.actions)}::text[])`);
  if (filters.targetId !== undefined) clauses.push(`target_id = ${params.add(filters.targetId)}`);
  if (filters.accountId !== undefined) clauses.push(`account_id = ${params.add(filters.accountId)}::uuid`);
  if (filters.outcome !== undefined) clauses.push(`outcome = ${params.add(filters.outcome)}`);
  if (filters.from) clauses.push(`at >= ${params.add(filters.from)}`);
  if (filters.to) clauses.push(`at < ${params.add(filters.to)}`);
  return clauses;
}

const STAGED_COLUMNS = `entry_id, at, actor_type, actor_id, actor_name, actor_via, action, outcome, target_type,
  target_id, account_id, changes, request_id, source_ip`;

type StagedRow = Omit<AuditEventRow, 'sequence' | 'id' | 'previous_hash' | 'hash'> & {
  staged: string;
  entry_id: string;
};

type UnchainedRow = Omit<AuditEventRow, 'sequence' | 'previous_hash' | 'hash'>;
type LockedHead = { last_sequence: string; last_hash: string };

/** The chain's head, locked until the caller's transaction ends: appends take turns on it. */
async function lockHead(manager: EntityManager): Promise<LockedHead> {
  const [head] = (await manager.query(
    `SELECT last_sequence, last_hash FROM audit_chain WHERE id = 1 FOR UPDATE`,
  )) as LockedHead[];
  return head;
}

/**
 * Every statement on `audit_events`, its chain head `audit_chain`, and `audit_pending`, where
 * entries wait for their place in the chain. A change stages its entry in its own transaction (no
 * lock but its row's); the chainer (audit-chainer.ts) moves committed entries into the chain in
 * batches, each batch under one lock of the head, so sequences have no gap and each entry hashes
 * the one before it. A transaction that rolls back takes its staged entry with it. The service's own
 * actions (no request waiting) append to the chain directly, in their transaction.
 */
export class AuditEventRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Stages the entries in the caller's transaction, in order, in one statement. */
  async stage(manager: EntityManager, drafts: readonly AuditEntryDraft[]): Promise<void> {
    if (drafts.length === 0) return;
    const at = new Date();
    const column = <T>(pick: (draft: AuditEntryDraft) => T): T[] => drafts.map(pick);
    await manager.query(
      `INSERT INTO audit_pending (${STAGED_COLUMNS})
       SELECT entry, $1::timestamptz, atype, aid, aname, avia, act, outc, ttype, tid, acct, string_to_array(chg, ','),
              req, ip
         FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                     $9::text[], $10::text[], $11::uuid[], $12::text[], $13::text[], $14::text[])
           WITH ORDINALITY AS u(entry, atype, aid, aname, avia, act, outc, ttype, tid, acct, chg, req, ip, ord)
        ORDER BY ord`,
      [
        at,
        drafts.map((d) => d.id ?? uuidv7()),
        column((d) => d.actor_type),
        column((d) => d.actor_id),
        column((d) => d.actor_name),
        column((d) => d.actor_via),
        column((d) => d.action),
        column((d) => d.outcome),
        column((d) => d.target_type),
        column((d) => d.target_id),
        column((d) => d.account_id),
        column((d) => d.changes.join(',')),
        column((d) => d.request_id),
        column((d) => d.source_ip),
      ],
    );
  }

  /**
   * Appends the entries to the chain in the caller's transaction, holding the head's lock until it
   * commits: for the service's own actions (no request to answer), which are few.
   */
  async append(manager: EntityManager, drafts: readonly AuditEntryDraft[]): Promise<void> {
    if (drafts.length === 0) return;
    const head = await lockHead(manager);
    const at = new Date();
    await this.chain(
      manager,
      head,
      drafts.map((draft) => ({ ...draft, id: draft.id ?? uuidv7(), at })),
    );
  }

  /**
   * Moves up to `limit` committed staged entries into the chain, oldest staged first, in one
   * transaction holding the head's lock. Returns how many it moved.
   */
  async chainStaged(limit: number): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const head = await lockHead(manager);
      // A data-modifying CTE: TypeORM hands back a bare DELETE … RETURNING as [rows, count].
      const staged = (await manager.query(
        `WITH moved AS (
           DELETE FROM audit_pending WHERE id IN (SELECT id FROM audit_pending ORDER BY id LIMIT $1)
           RETURNING id AS staged, ${STAGED_COLUMNS})
         SELECT * FROM moved ORDER BY staged`,
        [limit],
      )) as StagedRow[];
      await this.chain(
        manager,
        head,
        staged.map(({ staged: _order, entry_id, ...row }) => ({ ...row, id: entry_id })),
      );
      return staged.length;
    });
  }

  /** Gives the entries, in order, their places after the (locked) head, and inserts them. */
  private async chain(manager: EntityManager, head: LockedHead, rows: UnchainedRow[]): Promise<void> {
    if (rows.length === 0) return;
    let sequence = Number(head.last_sequence);
    let previousHash = head.last_hash;
    const entries = rows.map((row) => {
      sequence += 1;
      const entry = toAuditEventJson({ ...row, sequence: String(sequence), previous_hash: previousHash });
      entry.hash = auditEntryHash(entry);
      previousHash = entry.hash;
      return entry;
    });
    await this.insertChained(manager, entries, sequence, previousHash);
  }

  /** The chained entries and the head's move to the last of them, in one statement. */
  private async insertChained(manager: EntityManager, entries: AuditEventJson[], sequence: number, hash: string) {
    const column = <T>(pick: (entry: AuditEventJson) => T): T[] => entries.map(pick);
    await manager.query(
      `WITH head AS (UPDATE audit_chain SET last_sequence = $18, last_hash = $19 WHERE id = 1)
       INSERT INTO audit_events (${COLUMNS})
       SELECT s, i, a, at_, ai, an, av, ac, o, tt, ti, acc, string_to_array(c, ','), r, ip, ph, h
         FROM unnest($1::bigint[], $2::uuid[], $3::timestamptz[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::text[], $9::text[], $10::text[], $11::text[], $12::uuid[], $13::text[], $14::text[],
                     $15::text[], $16::text[], $17::text[])
           AS u(s, i, a, at_, ai, an, av, ac, o, tt, ti, acc, c, r, ip, ph, h)`,
      [
        column((e) => e.sequence),
        column((e) => e.id),
        column((e) => e.at),
        column((e) => e.actor.type),
        column((e) => e.actor.id),
        column((e) => e.actor.name),
        column((e) => e.actor.via),
        column((e) => e.action),
        column((e) => e.outcome),
        column((e) => e.target?.type ?? null),
        column((e) => e.target?.id ?? null),
        column((e) => e.account_id),
        column((e) => e.changes.join(',')),
        column((e) => e.request_id),
        column((e) => e.source_ip),
        column((e) => e.previous_hash),
        column((e) => e.hash),
        sequence,
        hash,
      ],
    );
  }

  /** A page, newest first, after the entry `afterId` (a cursor's); `limit` + 1 rows to tell whether more follow. */
  async page(filters: AuditFilters, afterId: string | null, limit: number): Promise<AuditEventJson[]> {
    const params = new SqlParams();
    const clauses = where(filters, params);
    if (afterId !== null)
      clauses.push(`sequence < (SELECT sequence FROM audit_events WHERE id = ${params.add(afterId)}::uuid)`);
    const rows = (await this.dataSource.query(
      `SELECT ${COLUMNS} FROM audit_events ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''}
        ORDER BY sequence DESC LIMIT ${params.add(limit + 1)}`,
      params.values,
    )) as AuditEventRow[];
    return rows.map(toAuditEventJson);
  }

  /** Entries after `afterSequence` in sequence order, within [from, to) when given: the export's and the verifier's batches. */
  async batch(afterSequence: number, limit: number, range: { from?: Date; to?: Date } = {}): Promise<AuditEventJson[]> {
    const params = new SqlParams();
    const clauses = [`sequence > ${params.add(afterSequence)}`, ...where(range, params)];
    const rows = (await this.dataSource.query(
      `SELECT ${COLUMNS} FROM audit_events WHERE ${clauses.join(' AND ')} ORDER BY sequence LIMIT ${params.add(limit)}`,
      params.values,
    )) as AuditEventRow[];
    return rows.map(toAuditEventJson);
  }

  async head(): Promise<ChainHead> {
    const [row] = (await this.dataSource.query(
      `SELECT pruned_through, last_sequence, last_hash FROM audit_chain WHERE id = 1`,
    )) as { pruned_through: string; last_sequence: string; last_hash: string }[];
    return {
      prunedThrough: Number(row.pruned_through),
      lastSequence: Number(row.last_sequence),
      lastHash: row.last_hash,
    };
  }

  /**
   * Retention: removes up to `limit` of the oldest entries older than `days` days, and records the
   * last sequence removed; the oldest entry kept keeps its `previous_hash`, the chain's anchor. Only
   * a prefix of the chain goes: the walk stops at the first entry not older than the cut-off, so a
   * clock that stepped back never leaves a gap. The cut-off written into the head is what lets the
   * append-only trigger allow these deletes, and it is cleared before the transaction commits (see
   * the AuditEvents migration). Returns how many.
   */
  async expire(days: number, limit: number): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const [{ cutoff }] = (await manager.query(`SELECT now() - make_interval(days => $1) AS cutoff`, [days])) as {
        cutoff: Date;
      }[];
      await manager.query(`UPDATE audit_chain SET retention_cutoff = $1 WHERE id = 1`, [cutoff]);
      const oldest = (await manager.query(`SELECT sequence, at FROM audit_events ORDER BY sequence LIMIT $1`, [
        limit,
      ])) as { sequence: string; at: Date }[];
      const kept = oldest.findIndex((row) => row.at.getTime() >= cutoff.getTime());
      const doomed = kept === -1 ? oldest : oldest.slice(0, kept);
      const last = doomed.length > 0 ? doomed[doomed.length - 1].sequence : null;
      if (last !== null) await manager.query(`DELETE FROM audit_events WHERE sequence <= $1`, [last]);
      await manager.query(
        `UPDATE audit_chain SET retention_cutoff = NULL,
                pruned_through = GREATEST(pruned_through, COALESCE($1::bigint, 0)) WHERE id = 1`,
        [last],
      );
      return doomed.length;
    });
  }
}
