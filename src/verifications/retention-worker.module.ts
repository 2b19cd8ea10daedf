import { Module } from '@nestjs/common';
import { RetentionWorker } from 'src/verifications/retention-worker.service';
import { VerificationRedactionModule } from 'src/verifications/verification-redaction.module';

/** The worker role's retention schedule. */
@Module({
  imports: [VerificationRedactionModule],
  providers: [RetentionWorker],
})
export class RetentionWorkerModule {}
