import type { DataSource, EntityManager } from 'typeorm';
import type { ActorType } from 'src/http/actor';

export interface LegalHold {
  verificationId: string;
  reason: string;
  caseReference: string | null;
  until: Date | null;
  placedAt: Date;
  placedBy: { type: ActorType; id: string | null; name: string | null };
}

interface LegalHoldRow {
  verification_id: string;
  reason: string;
  case_reference: string | null;
  until: Date | null;
  placed_at: Date;
  placed_by_type: ActorType;
  placed_by_id: string | null;
  placed_by_name: string | null;
}

const ACTIVE = `(h.until IS NULL OR h.until > now())`;

/**
 * The condition "the verification `verificationId` (an SQL expression of the outer row) is under
 * an active legal hold", for the statements that must pass it over (retention's).
 */
export function activeHoldSql(verificationId: string): string {
  return `EXISTS (SELECT 1 FROM verification_legal_holds h WHERE h.verification_id = ${verificationId} AND ${ACTIVE})`;
}

function toHold(row: LegalHoldRow): LegalHold {
  return {
    verificationId: row.verification_id,
    reason: row.reason,
    caseReference: row.case_reference,
    until: row.until,
    placedAt: row.placed_at,
    placedBy: { type: row.placed_by_type, id: row.placed_by_id, name: row.placed_by_name },
  };
}

/** Every statement on `verification_legal_holds`; writes take the caller's transaction. */
export class LegalHoldRepository {
  constructor(private readonly dataSource: DataSource) {}

  async find(verificationId: string, manager: EntityManager = this.dataSource.manager): Promise<LegalHold | null> {
    const [row] = (await manager.query(`SELECT * FROM verification_legal_holds WHERE verification_id = $1`, [
      verificationId,
    ])) as LegalHoldRow[];
    return row ? toHold(row) : null;
  }

  /** The verification's hold if it is active now, in the caller's transaction. */
  async findActive(manager: EntityManager, verificationId: string): Promise<LegalHold | null> {
    const [row] = (await manager.query(
      `SELECT * FROM verification_legal_holds h WHERE h.verification_id = $1 AND ${ACTIVE}`,
      [verificationId],
    )) as LegalHoldRow[];
    return row ? toHold(row) : null;
  }

  /** Places the hold, replacing any earlier one. */
  async put(manager: EntityManager, hold: LegalHold): Promise<void> {
    await manager.query(
      `INSERT INTO verification_legal_holds
         (verification_id, reason, case_reference, until, placed_at, placed_by_type, placed_by_id, placed_by_name)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (verification_id) DO UPDATE SET reason = EXCLUDED.reason, case_reference = EXCLUDED.case_reference,
         until = EXCLUDED.until, placed_at = EXCLUDED.placed_at, placed_by_type = EXCLUDED.placed_by_type,
         placed_by_id = EXCLUDED.placed_by_id, placed_by_name = EXCLUDED.placed_by_name`,
      [
        hold.verificationId,
        hold.reason,
        hold.caseReference,
        hold.until,
        hold.placedAt,
        hold.placedBy.type,
        hold.placedBy.id,
        hold.placedBy.name,
      ],
    );
  }

  /** True when there was a hold to remove. */
  async remove(manager: EntityManager, verificationId: string): Promise<boolean> {
    const [, count] = (await manager.query(`DELETE FROM verification_legal_holds WHERE verification_id = $1`, [
      verificationId,
    ])) as [unknown, number];
    return count > 0;
  }
}
