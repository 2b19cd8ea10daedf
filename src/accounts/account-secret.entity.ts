import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { Account } from 'src/accounts/account.entity';

@Entity({ name: 'account_secrets' })
@Index('account_secrets_account_idx', ['accountId', 'createdAt'])
export class AccountSecret {
  @PrimaryColumn('uuid')
  id!: string;

  @ForeignKey(() => Account, { name: 'account_secrets_account_id_fkey', onDelete: 'CASCADE' })
  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  /** SHA-256 of the secret: what the Bearer token is looked up by. */
  @Index('account_secrets_hash_key', { unique: true })
  @Column({ name: 'secret_hash', type: 'bytea' })
  secretHash!: Buffer;

  /** AES-256-GCM under SECRET_ENCRYPTION_KEY; needed to sign webhooks. */
  @Column({ name: 'secret_ciphertext', type: 'text' })
  secretCiphertext!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  /** Null for the current secret; set when a rotation starts its grace period. */
  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3, nullable: true })
  expiresAt!: Date | null;
}
