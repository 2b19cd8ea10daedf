import { Module } from '@nestjs/common';
import { AccountSecretRepository } from 'src/accounts/account-secret.repository';
import { SecretKeyCheck, SecretKeyVerifier } from 'src/accounts/secret-key-check';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';

/** The start-up check of SECRET_ENCRYPTION_KEY against the stored secrets, in every service role. */
@Module({
  imports: [DatabaseModule],
  providers: [...repositoryProviders(AccountSecretRepository), SecretKeyVerifier, SecretKeyCheck],
})
export class SecretKeyCheckModule {}
