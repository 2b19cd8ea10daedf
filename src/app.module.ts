import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { RateLimitModule } from 'src/auth/rate-limit.module';
import { ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { OpsModule } from 'src/ops/ops.module';
import { VerificationsModule } from 'src/verifications/verifications.module';
import { WebhooksModule } from 'src/webhooks/webhooks.module';

@Module({
  imports: [ConfigModule, DatabaseModule, AccountsModule, WebhooksModule, VerificationsModule, RateLimitModule, OpsModule],
})
export class AppModule {}
