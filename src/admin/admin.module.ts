import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { AdminAccountsController } from 'src/admin/admin-accounts.controller';
import { AdminAuditEventsController } from 'src/admin/admin-audit-events.controller';
import { AdminLegalHoldsController } from 'src/admin/admin-legal-holds.controller';
import { AdminOperatorKeysController } from 'src/admin/admin-operator-keys.controller';
import { AuditApiModule } from 'src/audit/audit-api.module';
import { AuditModule } from 'src/audit/audit.module';
import { OperatorsModule } from 'src/operators/operators.module';
import { VerificationRedactionModule } from 'src/verifications/verification-redaction.module';
import { WebhooksModule } from 'src/webhooks/webhooks.module';

/** The admin API's routes: accounts and their webhook endpoint, operator keys, the audit trail, legal holds. */
@Module({
  imports: [AccountsModule, WebhooksModule, OperatorsModule, AuditModule, AuditApiModule, VerificationRedactionModule],
  controllers: [
    AdminAccountsController,
    AdminOperatorKeysController,
    AdminAuditEventsController,
    AdminLegalHoldsController,
  ],
})
export class AdminModule {}
