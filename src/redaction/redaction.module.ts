import { Module } from '@nestjs/common';
import { RetentionService } from 'src/redaction/retention.service';
import { VerificationRedactor } from 'src/redaction/verification-redactor.service';
import { WebhookQueueModule } from 'src/webhooks/webhook-queue.module';

/**
 * Erasing personal data: the redactor (the client's redact route, the ops CLI) and the retention
 * policy. No controller, so the worker role and the CLI can import it without serving any route.
 */
@Module({
  imports: [WebhookQueueModule],
  providers: [VerificationRedactor, RetentionService],
  exports: [VerificationRedactor, RetentionService],
})
export class RedactionModule {}
