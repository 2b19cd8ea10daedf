import { Module } from '@nestjs/common';
import { DatabaseModule } from 'src/database/database.module';
import { AuditModule } from 'src/audit/audit.module';
import { LegalHoldsService } from 'src/verifications/legal-holds.service';
import { VerificationRedactor } from 'src/verifications/verification-redactor.service';
import { VerificationRepositoriesModule } from 'src/verifications/verification-repositories.module';
import { WebhooksCoreModule } from 'src/webhooks/webhooks-core.module';

/**
 * Erasing personal data and the legal holds that stop it: the redactor (the client's redact route, the ops CLI, the retention pass in
 * src/retention/). No controller, so the worker role and the CLI can import it without serving any route.
 */
@Module({
  imports: [DatabaseModule, VerificationRepositoriesModule, WebhooksCoreModule, AuditModule],
  providers: [VerificationRedactor, LegalHoldsService],
  exports: [VerificationRedactor, LegalHoldsService, VerificationRepositoriesModule],
})
export class VerificationRedactionModule {}
