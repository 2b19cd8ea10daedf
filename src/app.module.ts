import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { VerificationsModule } from 'src/verifications/verifications.module';
import { WebhooksModule } from 'src/webhooks/webhooks.module';

@Module({
  imports: [ConfigModule, DatabaseModule, AccountsModule, WebhooksModule, VerificationsModule],
})
export class AppModule {}
