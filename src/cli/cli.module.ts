import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { OperatorsModule } from 'src/operators/operators.module';
import { RetentionModule } from 'src/retention/retention.module';
import { VerificationRedactionModule } from 'src/verifications/verification-redaction.module';
import { WebhooksModule } from 'src/webhooks/webhooks.module';

/**
 * The operations CLI drives the API's own services (accounts, the delivery log, redaction and
 * retention). It runs no worker: replays and redaction events are only enqueued, for the running
 * workers to deliver.
 */
@Module({
  imports: [
    ConfigModule,
    DatabaseModule,
    AccountsModule,
    WebhooksModule,
    VerificationRedactionModule,
    RetentionModule,
    OperatorsModule,
  ],
})
export class CliModule {}
