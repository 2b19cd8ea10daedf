import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Applicant, RejectionReason, VerificationDocument, VerificationStatus } from 'src/verifications/verification.types';

@Entity({ name: 'verifications' })
export class Verification {
  @PrimaryColumn('uuid')
  id!: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @Column({ name: 'external_user_id', type: 'varchar', length: 255 })
  externalUserId!: string;

  @Column({ type: 'varchar', length: 16 })
  status!: VerificationStatus;

  @Column({ type: 'integer' })
  version!: number;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt!: Date;

  @Column({ name: 'submitted_at', type: 'timestamptz', precision: 3, nullable: true })
  submittedAt!: Date | null;

  @Column({ name: 'decided_at', type: 'timestamptz', precision: 3, nullable: true })
  decidedAt!: Date | null;

  @Column({ type: 'jsonb', nullable: true })
  applicant!: Applicant | null;

  @Column({ type: 'jsonb', nullable: true })
  document!: VerificationDocument | null;

  @Column({ name: 'rejection_reasons', type: 'text', array: true, default: () => "'{}'" })
  rejectionReasons!: RejectionReason[];

  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata!: Record<string, string>;
}

/** Each property's column; `satisfies` makes a property added to the entity but not here a compile error. */
const COLUMN_OF = {
  id: 'id',
  accountId: 'account_id',
  externalUserId: 'external_user_id',
  status: 'status',
  version: 'version',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
  submittedAt: 'submitted_at',
  decidedAt: 'decided_at',
  applicant: 'applicant',
  document: 'document',
  rejectionReasons: 'rejection_reasons',
  metadata: 'metadata',
} as const satisfies Record<keyof Verification, string>;

/** The select list that reads a `verifications` row into a Verification's shape in raw SQL. */
export const VERIFICATION_COLUMNS = Object.entries(COLUMN_OF)
  .map(([property, column]) => (property === column ? column : `${column} AS "${property}"`))
  .join(', ');
