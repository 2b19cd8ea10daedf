import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { RetentionWorker } from 'src/retention/retention-worker.service';
import { RetentionService } from 'src/retention/retention.service';
import { VerificationRedactionModule } from 'src/verifications/verification-redaction.module';
import { WebhooksCoreModule } from 'src/webhooks/webhooks-core.module';

/**
 * The retention policy's passes, over the owners' repositories (verifications through their
 * redactor, webhook events): for the CLI's `retention` command. No controller, no schedule.
 */
@Module({
  imports: [VerificationRedactionModule, WebhooksCoreModule, AuditModule],
  providers: [RetentionService],
  exports: [RetentionService],
})
export class RetentionModule {}

/** The worker role's retention schedule: a pass every RETENTION_INTERVAL_MS. */
@Module({
  imports: [RetentionModule],
  providers: [RetentionWorker],
})
export class RetentionWorkerModule {}
