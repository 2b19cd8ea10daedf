import { Column, Entity, ForeignKey, PrimaryColumn } from 'typeorm';
import { Verification } from 'src/verifications/verification.entity';
import type { VerificationStatus } from 'src/verifications/verification.types';

@Entity({ name: 'verification_status_history' })
export class VerificationStatusHistory {
  @ForeignKey(() => Verification, { name: 'verification_status_history_verification_id_fkey', onDelete: 'CASCADE' })
  @PrimaryColumn({ name: 'verification_id', type: 'uuid' })
  verificationId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  @Column({ type: 'varchar', length: 16 })
  status!: VerificationStatus;

  @Column({ type: 'timestamptz', precision: 3 })
  at!: Date;
}
