import { Module } from '@nestjs/common';
import { VerificationRedactor } from 'src/verifications/verification-redactor.service';
import { VerificationRepositoriesModule } from 'src/verifications/verification-repositories.module';
import { WebhookQueueModule } from 'src/webhooks/webhook-queue.module';
import { WebhookRepositoriesModule } from 'src/webhooks/webhook-repositories.module';

/**
 * Erasing personal data: the redactor (the client's redact route, the ops CLI, the retention pass in
 * src/retention/). No controller, so the worker role and the CLI can import it without serving any route.
 */
@Module({
  imports: [VerificationRepositoriesModule, WebhookQueueModule, WebhookRepositoriesModule],
  providers: [VerificationRedactor],
  exports: [VerificationRedactor, VerificationRepositoriesModule],
})
export class VerificationRedactionModule {}
