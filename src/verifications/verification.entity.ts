import { Check, Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Account } from 'src/accounts/account.entity';
import type {
  Applicant,
  RejectionReason,
  VerificationDocument,
  VerificationStatus,
} from 'src/verifications/verification.types';

/** Lower-cased external id, full name and email, separated by chr(31): what `q` on the list route matches. */
const SEARCH_TEXT_SQL = `lower(external_user_id)
  || chr(31) || lower(
       CASE
         WHEN applicant->>'first_name' IS NOT NULL AND applicant->>'last_name' IS NOT NULL
           THEN (applicant->>'first_name') || ' ' || (applicant->>'last_name')
         ELSE coalesce(applicant->>'first_name', applicant->>'last_name', '')
       END)
  || chr(31) || lower(coalesce(applicant->>'email', ''))`;

@Entity({ name: 'verifications' })
@Check('verifications_status_check', `status IN ('pending', 'processing', 'approved', 'rejected')`)
@Check('verifications_version_check', 'version >= 1')
// Every list query is scoped by account first; each sort order has its own keyset index.
@Index('verifications_account_status_created_idx', ['accountId', 'status', 'createdAt', 'id'])
@Index('verifications_account_status_updated_idx', ['accountId', 'status', 'updatedAt', 'id'])
@Index('verifications_account_external_user_idx', ['accountId', 'externalUserId', 'createdAt', 'id'])
// Built by migrations/ alone, as TypeORM cannot express them: (account_id, created_at, id) and
// (account_id, updated_at, id) INCLUDE (search_text); gin (account_id, search_text gin_trgm_ops).
@Index('verifications_account_created_search_idx', { synchronize: false })
@Index('verifications_account_updated_search_idx', { synchronize: false })
@Index('verifications_account_search_idx', { synchronize: false })
// The retention pass's walk: (coalesce(decided_at, updated_at)) WHERE redacted_at IS NULL.
@Index('verifications_retention_idx', { synchronize: false })
// (id) WHERE response_json IS NULL: the rows whose text is still to render (VerificationRepository.renderMissingJson).
@Index('verifications_response_json_missing_idx', { synchronize: false })
export class Verification {
  @PrimaryColumn('uuid')
  id!: string;

  @ForeignKey(() => Account, { name: 'verifications_account_id_fkey' })
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

  /** When the personal fields were erased (the redact route or retention); null while they are kept. */
  @Column({ name: 'redacted_at', type: 'timestamptz', precision: 3, nullable: true })
  redactedAt!: Date | null;

  /** Computed by PostgreSQL and only searched in SQL: never selected or written (an insert's RETURNING fills it in). */
  @Column({
    name: 'search_text',
    type: 'text',
    nullable: true,
    generatedType: 'STORED',
    asExpression: SEARCH_TEXT_SQL,
    select: false,
    insert: false,
    update: false,
  })
  searchText?: string;

  /**
   * The contract JSON text of the row as it is now (verificationJson, verification.mapper.ts), written
   * in the statement of every change; the list and detail routes send it as it is. Null only for a
   * row another release wrote, which does not know the column: a trigger (migration
   * VerificationResponseJson1763820000000) nulls the text of any update that does not write it, and
   * readers render such rows from their columns. Never read into the entity.
   */
  @Column({ name: 'response_json', type: 'text', nullable: true, select: false })
  responseJson?: string | null;
}

/** Each property's column but searchText and responseJson (never read); `satisfies` makes a property added to the entity but not here a compile error. */
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
  redactedAt: 'redacted_at',
} as const satisfies Record<Exclude<keyof Verification, 'searchText' | 'responseJson'>, string>;

/** The select list that reads a `verifications` row into a Verification's shape in raw SQL. */
export const VERIFICATION_COLUMNS = Object.entries(COLUMN_OF)
  .map(([property, column]) => (property === column ? column : `${column} AS "${property}"`))
  .join(', ');
