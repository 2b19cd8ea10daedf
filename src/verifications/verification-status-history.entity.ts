import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { VerificationStatus } from 'src/verifications/verification.types';

@Entity({ name: 'verification_status_history' })
export class VerificationStatusHistory {
  @PrimaryColumn({ name: 'verification_id', type: 'uuid' })
  verificationId!: string;

  @PrimaryColumn({ type: 'integer' })
  version!: number;

  @Column({ type: 'varchar', length: 16 })
  status!: VerificationStatus;

  @Column({ type: 'timestamptz', precision: 3 })
  at!: Date;
}
