import { Module } from '@nestjs/common';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';
import { LegalHoldRepository } from 'src/verifications/legal-hold.repository';
import { VerificationStatusHistoryRepository } from 'src/verifications/verification-status-history.repository';
import { VerificationRepository } from 'src/verifications/verification.repository';

/** The verifications feature's repositories (verifications, their status history), for every module that uses them. */
@Module({
  imports: [DatabaseModule],
  providers: repositoryProviders(VerificationRepository, VerificationStatusHistoryRepository, LegalHoldRepository),
  exports: [VerificationRepository, VerificationStatusHistoryRepository, LegalHoldRepository],
})
export class VerificationRepositoriesModule {}
