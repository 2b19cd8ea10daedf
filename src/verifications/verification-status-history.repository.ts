import type { EntityManager } from 'typeorm';
import { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';

/**
 * The insert, for the caller's CTE, of one history row per row of `source` (columns id, version,
 * status, updated_at: the verification as a status change left it).
 */
export function insertStatusHistoryFromSql(source: string): string {
  return `INSERT INTO verification_status_history (verification_id, version, status, at)
    SELECT id, version, status, updated_at FROM ${source}`;
}

/** A verification's history entries as `statusHistoryOf` returns them: [status, at, version], oldest first. */
export type StatusHistoryTuples = [VerificationStatusHistory['status'], string, number][];

/**
 * The verification's history, oldest first (`[]` when empty), as one json value of
 * StatusHistoryTuples over `verificationId`, the SQL expression of a verification id in the
 * caller's statement: a transport the mapper renders (verificationDetailJson), not the contract's text.
 */
export function statusHistoryOf(verificationId: string): string {
  return `(
  SELECT coalesce(json_agg(json_build_array(history.status, history.at, history.version) ORDER BY history.version), '[]')
    FROM verification_status_history history WHERE history.verification_id = ${verificationId})`;
}

/** The entries of StatusHistoryTuples. */
export function statusHistoryFrom(verificationId: string, tuples: StatusHistoryTuples): VerificationStatusHistory[] {
  return tuples.map(([status, at, version]) => ({ verificationId, status, at: new Date(at), version }));
}

/**
 * Every statement on `verification_status_history`: the first entry of a new verification, the
 * redaction's read, and the fragments the status change and the detail read compose.
 */
export class VerificationStatusHistoryRepository {
  async insert(manager: EntityManager, entry: VerificationStatusHistory): Promise<void> {
    await manager.insert(VerificationStatusHistory, entry);
  }

  /** The verification's history, oldest first, in the caller's transaction. */
  ofVerification(manager: EntityManager, verificationId: string): Promise<VerificationStatusHistory[]> {
    return manager.query(
      `SELECT status, at, version FROM verification_status_history WHERE verification_id = $1 ORDER BY version`,
      [verificationId],
    );
  }
}
