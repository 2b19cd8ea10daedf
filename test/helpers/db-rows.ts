import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

export interface RowFields {
  id?: string;
  external_user_id?: string;
  status?: 'pending' | 'processing' | 'approved' | 'rejected';
  created_at: string;
  updated_at?: string;
  applicant?: Record<string, string | null> | null;
}

/**
 * Inserts a verification directly, for timestamps the API cannot produce (identical created_at,
 * rows far in the past). Only for list tests: no history row, no event.
 */
export async function insertVerificationRow(db: Pool, accountId: string, fields: RowFields): Promise<string> {
  const id = fields.id ?? randomUUID();
  await db.query(
    `INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at, applicant, rejection_reasons)
     VALUES ($1, $2, $3, $4, 1, $5, $6, $7, $8)`,
    [
      id,
      accountId,
      fields.external_user_id ?? `row-${id.slice(0, 8)}`,
      fields.status ?? 'pending',
      fields.created_at,
      fields.updated_at ?? fields.created_at,
      fields.applicant === undefined ? null : JSON.stringify(fields.applicant),
      fields.status === 'rejected' ? ['other'] : [],
    ],
  );
  return id;
}
