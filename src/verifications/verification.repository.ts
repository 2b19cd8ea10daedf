import type { DataSource, EntityManager } from 'typeorm';
import type { PageSql } from 'src/common/keyset-list';
import type { SqlParams } from 'src/common/sql-params';
import { onReplica } from 'src/database/read-replica';
import { REDACTED_EXTERNAL_USER_ID } from 'src/verifications/redacted-verification';
import {
  type VerificationJsonRow,
  verificationDetailJsonSql,
  verificationJsonColumns,
} from 'src/verifications/verification-json.sql';
import { statusHistoryJsonOf } from 'src/verifications/verification-status-history.repository';
import { VERIFICATION_COLUMNS, Verification } from 'src/verifications/verification.entity';

/** Select-list items the caller adds over the SQL expression of the verification's account id. */
export type AccountColumns = (accountId: string) => string;

/** One verification of one account ($1 id, $2 account), as the detail route's JSON text, with its version. */
export const VERIFICATION_DETAIL_SQL = `SELECT version, ${verificationDetailJsonSql(statusHistoryJsonOf('verifications.id'))} AS json
  FROM verifications WHERE id = $1 AND account_id = $2`;

export interface VerificationDetailRow {
  version: number;
  json: string;
}

/** The row by id ($1), with `accountColumns`: the status change's read (the caller adds FOR UPDATE when it locks). */
export function verificationByIdSql(accountColumns: AccountColumns): string {
  return `
  SELECT ${VERIFICATION_COLUMNS}, ${accountColumns('verifications.account_id')}
    FROM verifications WHERE id = $1`;
}

/** The parameters `updateIfUnchangedSql` takes, $1 to $9; a composed statement numbers its own after them. */
export const UPDATE_IF_UNCHANGED_PARAMS = 9;

/**
 * The status change's update, for the caller's CTE: written only if the row is still as it was read
 * (the same version, and not redacted). Returns id, version, status, updated_at when written.
 */
export function updateIfUnchangedSql(): string {
  return `UPDATE verifications
       SET status = $3, version = version + 1, updated_at = $4, submitted_at = $5, decided_at = $6,
           rejection_reasons = $7::text[], applicant = $8::jsonb, document = $9::jsonb
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
  ];
}

/** The erasure of the redacted verifications' personal fields, for the caller's CTE. */
export function eraseVerificationsSql(redacted: Verification[], params: SqlParams): string {
  const p = (value: unknown) => params.add(value);
  return `UPDATE verifications v
            SET external_user_id = ${p(REDACTED_EXTERNAL_USER_ID)}, applicant = NULL, document = NULL,
                metadata = '{}'::jsonb, redacted_at = r.at, updated_at = r.at
           FROM unnest(${p(redacted.map((v) => v.id))}::uuid[], ${p(redacted.map((v) => v.updatedAt))}::timestamptz[]) AS r(id, at)
          WHERE v.id = r.id`;
}

/**
 * A list page's statement: each row's JSON text and cursor key, `columns`. With a search (`q`), the
 * page's keys come first from an index-only walk of the covering keyset index (search_text is
 * INCLUDEd), then only those rows are read: see docs/performance.md.
 */
export function verificationPageSql(sortColumn: string, search: boolean): (page: PageSql) => string {
  const columns = verificationJsonColumns(sortColumn);
  if (!search) {
    return ({ where, orderBy, limit }) =>
      `SELECT ${columns} FROM verifications WHERE ${where} ${orderBy} LIMIT ${limit}`;
  }
  return ({ where, orderBy, limit, column, direction }) =>
    `SELECT ${columns} FROM (
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

  async insert(manager: EntityManager, verification: Verification): Promise<void> {
    await manager.insert(Verification, verification);
  }

  /** Runs a `verificationPageSql` statement on a replica. */
  readPage(sql: string, values: unknown[]): Promise<VerificationJsonRow[]> {
    return onReplica(this.dataSource, (manager) => manager.query(sql, values));
  }

  /** The detail's JSON text, in the caller's read (a replica's or the primary's). */
  async detail(manager: EntityManager, accountId: string, id: string): Promise<VerificationDetailRow | null> {
    const [row] = (await manager.query(VERIFICATION_DETAIL_SQL, [id, accountId])) as VerificationDetailRow[];
    return row ?? null;
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
  ): Promise<(Verification & Extra)[]> {
    return manager.query(
      `SELECT ${VERIFICATION_COLUMNS}, ${accountColumns('verifications.account_id')} FROM verifications
          WHERE ${EXPIRED} ORDER BY coalesce(decided_at, updated_at) LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [days, limit],
    );
  }

  /** How many verifications `lockExpired` would find now, over any number of calls. */
  async countExpired(days: number): Promise<number> {
    const [row] = (await this.dataSource.query(`SELECT count(*)::int AS count FROM verifications WHERE ${EXPIRED}`, [
      days,
    ])) as { count: number }[];
    return row.count;
  }
}
