import { Module } from '@nestjs/common';
import { RetentionService } from 'src/verifications/retention.service';
import { VerificationRedactor } from 'src/verifications/verification-redactor.service';
import { VerificationRepositoriesModule } from 'src/verifications/verification-repositories.module';
import { WebhookQueueModule } from 'src/webhooks/webhook-queue.module';
import { WebhookRepositoriesModule } from 'src/webhooks/webhook-repositories.module';
import { WebhookRetentionModule } from 'src/webhooks/webhook-retention.module';

/**
 * Erasing personal data: the redactor (the client's redact route, the ops CLI) and the retention
 * policy. No controller, so the worker role and the CLI can import it without serving any route.
 */
@Module({
  imports: [VerificationRepositoriesModule, WebhookQueueModule, WebhookRepositoriesModule, WebhookRetentionModule],
  providers: [VerificationRedactor, RetentionService],
  exports: [VerificationRedactor, RetentionService],
})
export class VerificationRedactionModule {}
