import type { EntityManager } from 'typeorm';
import { isoTextSql } from 'src/verifications/verification-json.sql';
import { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';

/**
 * The insert, for the caller's CTE, of one history row per row of `source` (columns id, version,
 * status, updated_at: the verification as a status change left it).
 */
export function insertStatusHistoryFromSql(source: string): string {
  return `INSERT INTO verification_status_history (verification_id, version, status, at)
    SELECT id, version, status, updated_at FROM ${source}`;
}

/**
 * The verification's status_history as its contract JSON text, oldest first (`[]` when empty), over
 * `verificationId`: the SQL expression of a verification id in the caller's statement.
 */
export function statusHistoryJsonOf(verificationId: string): string {
  return `(
  SELECT coalesce('[' || string_agg(
           '{"status":' || to_json(history.status)::text || ',"at":' || '"' || ${isoTextSql('history.at')} || '"'
           || ',"version":' || history.version || '}', ',' ORDER BY history.version) || ']', '[]')
    FROM verification_status_history history WHERE history.verification_id = ${verificationId})`;
}

/**
 * Every statement on `verification_status_history`: the first entry of a new verification, the
 * redaction's read, and the fragments the status change and the detail JSON compose.
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
