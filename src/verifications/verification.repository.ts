import type { CommitProbe } from 'src/database/in-doubt';
import type { DataSource, EntityManager } from 'typeorm';
import type { PageSql } from 'src/common/keyset-list';
import type { SqlParams } from 'src/common/sql-params';
import { onReplica } from 'src/database/read-replica';
import { REDACTED_EXTERNAL_USER_ID } from 'src/verifications/redacted-verification';
import {
  type StatusHistoryTuples,
  statusHistoryFrom,
  statusHistoryOf,
} from 'src/verifications/verification-status-history.repository';
import { VERIFICATION_COLUMNS, Verification } from 'src/verifications/verification.entity';
import { verificationDetailJson, verificationJson } from 'src/verifications/verification.mapper';

/** Select-list items the caller adds over the SQL expression of the verification's account id. */
export type AccountColumns = (accountId: string) => string;

/** A timestamptz as JS toISOString() writes it: UTC, milliseconds (the columns are timestamptz(3)). */
export function isoTextSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** One verification of one account ($1 id, $2 account): its version, stored text and history. */
export const VERIFICATION_DETAIL_SQL = `SELECT version, response_json AS json, ${statusHistoryOf('verifications.id')} AS history
  FROM verifications WHERE id = $1 AND account_id = $2`;

interface StoredDetailRow {
  version: number;
  /** Null when another release wrote the row last (see Verification.responseJson). */
  json: string | null;
  history: StatusHistoryTuples;
}

export interface VerificationDetailRow {
  version: number;
  json: string;
}

/** A list page's row: the verification's JSON text and its cursor key (the sort column's ISO text, the id). */
export interface VerificationJsonRow {
  id: string;
  cursor_at: string;
  json: string;
}

/** The row by id ($1), with `accountColumns`: the status change's read (the caller adds FOR UPDATE when it locks). */
/** Whether the verification `id` is committed (its create's answer was lost). */
export function verificationCommitted(id: string): CommitProbe {
  return async (query) => (await query('SELECT 1 FROM verifications WHERE id = $1', [id])).length > 0;
}

export function verificationByIdSql(accountColumns: AccountColumns): string {
  return `
  SELECT ${VERIFICATION_COLUMNS}, ${accountColumns('verifications.account_id')}
    FROM verifications WHERE id = $1`;
}

/** The parameters `updateIfUnchangedSql` takes, $1 to $10; a composed statement numbers its own after them. */
export const UPDATE_IF_UNCHANGED_PARAMS = 10;

/**
 * The status change's update, for the caller's CTE: written only if the row is still as it was read
 * (the same version, and not redacted). Returns id, version, status, updated_at when written.
 */
export function updateIfUnchangedSql(): string {
  return `UPDATE verifications
       SET status = $3, version = version + 1, updated_at = $4, submitted_at = $5, decided_at = $6,
           rejection_reasons = $7::text[], applicant = $8::jsonb, document = $9::jsonb, response_json = $10
     WHERE id = $1 AND version = $2 AND redacted_at IS NULL
    RETURNING id, version, status, updated_at`;
}

/** The parameters of `updateIfUnchangedSql`, in its order. */
export function updateIfUnchangedValues(read: Verification, next: Verification): unknown[] {
  const json = (value: object | null) => (value === null ? null : JSON.stringify(value));
  return [
    next.id,
    read.version,
    next.status,
    next.updatedAt,
    next.submittedAt,
    next.decidedAt,
    next.rejectionReasons,
    json(next.applicant),
    json(next.document),
    verificationJson(next),
  ];
}

/** The erasure of the redacted verifications' personal fields, and their new text, for the caller's CTE. */
export function eraseVerificationsSql(redacted: Verification[], params: SqlParams): string {
  const p = (value: unknown) => params.add(value);
  return `UPDATE verifications v
            SET external_user_id = ${p(REDACTED_EXTERNAL_USER_ID)}, applicant = NULL, document = NULL,
                metadata = '{}'::jsonb, redacted_at = r.at, updated_at = r.at, response_json = r.json
           FROM unnest(${p(redacted.map((v) => v.id))}::uuid[], ${p(redacted.map((v) => v.updatedAt))}::timestamptz[],
                       ${p(redacted.map(verificationJson))}::text[]) AS r(id, at, json)
          WHERE v.id = r.id`;
}

/**
 * A list page's statement: each row's stored text and cursor key. The page's rows are chosen first
 * (with a search, `q`, by an index-only walk of the covering keyset index, search_text being
 * INCLUDEd, then only those rows are read); the cursor key's text is written for those rows alone,
 * whatever plan PostgreSQL picks for the walk (see docs/performance.md).
 */
export function verificationPageSql(
  sortColumn: string,
  search: boolean,
  statuses: () => string | undefined,
): (page: PageSql) => string {
  const cursorAt = `${isoTextSql('page.page_at')} AS cursor_at`;
  if (!search) {
    // With statuses (the WHERE then says `status = wanted.status`), each one's own index range in order,
    // merged: as one `status = ANY(…)`, PostgreSQL 15 walks the account's rows in time order and filters,
    // reading every newer row of another status first (docs/performance.md).
    return ({ where, orderBy, limit, direction }) => {
      const inner = `SELECT id, ${sortColumn} AS page_at, response_json AS json FROM verifications WHERE ${where} ${orderBy} LIMIT ${limit}`;
      const wanted = statuses();
      const rows =
        wanted === undefined
          ? `(${inner}) page`
          : `(SELECT DISTINCT unnest(${wanted}::varchar[]) AS status) wanted CROSS JOIN LATERAL (${inner}) page`;
      return `SELECT page.id, ${cursorAt}, page.json FROM ${rows} ORDER BY page.page_at ${direction}, page.id ${direction}${wanted === undefined ? '' : ` LIMIT ${limit}`}`;
    };
  }
  return ({ where, orderBy, limit, column, direction }) =>
    `SELECT page.page_id AS id, ${cursorAt}, verifications.response_json AS json FROM (
           SELECT id AS page_id, ${column} AS page_at FROM verifications WHERE ${where} ${orderBy} LIMIT ${limit}
         ) page JOIN verifications ON verifications.id = page.page_id
         ORDER BY page.page_at ${direction}, page.page_id ${direction}`;
}

/**
 * Past the retention window of $1 days: the age is the decision, or the last change of one never
 * decided. The expression and predicate are those of the partial index verifications_retention_idx.
 */
const EXPIRED = `redacted_at IS NULL AND coalesce(decided_at, updated_at) < now() - make_interval(days => $1)`;

/**
 * Every statement on `verifications`. Methods take the caller's transaction, or the statement is a
 * fragment above that the caller composes (the status change's one statement, the redaction's).
 */
export class VerificationRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A new row, with its text. */
  async insert(manager: EntityManager, verification: Verification): Promise<void> {
    await manager.insert(Verification, { ...verification, responseJson: verificationJson(verification) });
  }

  /** Runs a `verificationPageSql` statement on a replica; a row without its text is rendered from its columns. */
  readPage(sql: string, values: unknown[]): Promise<VerificationJsonRow[]> {
    return onReplica(this.dataSource, async (manager) => {
      const rows = (await manager.query(sql, values)) as { id: string; cursor_at: string; json: string | null }[];
      const missing = rows.filter((row) => row.json === null).map((row) => row.id);
      if (missing.length === 0) return rows as VerificationJsonRow[];
      const rendered = new Map((await this.byIds(manager, missing)).map((v) => [v.id, verificationJson(v)]));
      return rows.map((row) => ({ ...row, json: row.json ?? (rendered.get(row.id) as string) }));
    });
  }

  /** The detail's JSON text and version, in the caller's read (a replica's or the primary's). */
  async detail(manager: EntityManager, accountId: string, id: string): Promise<VerificationDetailRow | null> {
    const [row] = (await manager.query(VERIFICATION_DETAIL_SQL, [id, accountId])) as StoredDetailRow[];
    if (!row) return null;
    const history = statusHistoryFrom(id, row.history);
    if (row.json !== null) return { version: row.version, json: verificationDetailJson(row.json, history) };
    const [columns] = await this.byIds(manager, [id]);
    if (!columns) return null;
    return { version: columns.version, json: verificationDetailJson(verificationJson(columns), history) };
  }

  /** The rows of `ids`, every column but the stored text. */
  private byIds(manager: EntityManager, ids: string[]): Promise<Verification[]> {
    return manager.query(`SELECT ${VERIFICATION_COLUMNS} FROM verifications WHERE id = ANY($1::uuid[])`, [ids]);
  }

  /**
   * Writes the text of up to `limit` rows that have none (rows another release wrote last), in the
   * caller's transaction, skipping rows another transaction holds. Returns how many it wrote.
   */
  async renderMissingJson(manager: EntityManager, limit: number): Promise<number> {
    const rows = (await manager.query(
      `SELECT ${VERIFICATION_COLUMNS} FROM verifications WHERE response_json IS NULL
        ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    )) as Verification[];
    if (rows.length === 0) return 0;
    await manager.query(
      `UPDATE verifications v SET response_json = r.json
         FROM unnest($1::uuid[], $2::text[]) AS r(id, json) WHERE v.id = r.id`,
      [rows.map((v) => v.id), rows.map(verificationJson)],
    );
    return rows.length;
  }

  /** The verification (of `accountId`, unless null), locked in the caller's transaction, with `accountColumns`. */
  async lockById<Extra extends object>(
    manager: EntityManager,
    accountId: string | null,
    id: string,
    accountColumns: AccountColumns,
  ): Promise<(Verification & Extra) | undefined> {
    const [row] = (await manager.query(
      `SELECT ${VERIFICATION_COLUMNS}, ${accountColumns('verifications.account_id')} FROM verifications
          WHERE id = $1 ${accountId === null ? '' : 'AND account_id = $2'} FOR UPDATE`,
      accountId === null ? [id] : [id, accountId],
    )) as (Verification & Extra)[];
    return row;
  }

  /**
   * Up to `limit` unredacted verifications older than `days` (`decided_at`, else `updated_at`),
   * oldest first, locked in the caller's transaction, skipping rows another transaction holds.
   */
  lockExpired<Extra extends object>(
    manager: EntityManager,
    days: number,
    limit: number,
    accountColumns: AccountColumns,
    held: (verificationId: string) => string,
  ): Promise<(Verification & Extra)[]> {
    return manager.query(
      `SELECT ${VERIFICATION_COLUMNS}, ${accountColumns('verifications.account_id')} FROM verifications
          WHERE ${EXPIRED} AND NOT ${held('verifications.id')} ORDER BY coalesce(decided_at, updated_at) LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [days, limit],
    );
  }

  /** How many verifications `lockExpired` would find now, over any number of calls (`only`: those that also match it). */
  async countExpired(days: number, only?: (verificationId: string) => string): Promise<number> {
    const [row] = (await this.dataSource.query(
      `SELECT count(*)::int AS count FROM verifications WHERE ${EXPIRED} ${only ? `AND ${only('verifications.id')}` : ''}`,
      [days],
    )) as { count: number }[];
    return row.count;
  }
}
