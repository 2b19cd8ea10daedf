import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/accounts/accounts.module';
import { AuditModule } from 'src/audit/audit.module';
import { cursorCodecProvider } from 'src/common/cursor.provider';
import { DatabaseModule } from 'src/database/database.module';
import { VerificationRedactionModule } from 'src/verifications/verification-redaction.module';
import { VerificationRepositoriesModule } from 'src/verifications/verification-repositories.module';
import { InternalVerificationsController } from 'src/verifications/internal-verifications.controller';
import { PublicVerificationsController } from 'src/verifications/public-verifications.controller';
import { VerificationStatusHistory } from 'src/verifications/verification-status-history.entity';
import { Verification } from 'src/verifications/verification.entity';
import { VerificationListService } from 'src/verifications/verification-list.service';
import { VerificationsService } from 'src/verifications/verifications.service';
import { WebhooksModule } from 'src/webhooks/webhooks.module';

@Module({
  imports: [
    TypeOrmModule.forFeature([Verification, VerificationStatusHistory]),
    DatabaseModule,
    AccountsModule,
    WebhooksModule,
    VerificationRepositoriesModule,
    VerificationRedactionModule,
    AuditModule,
  ],
  controllers: [PublicVerificationsController, InternalVerificationsController],
  providers: [VerificationsService, VerificationListService, cursorCodecProvider],
})
export class VerificationsModule {}
