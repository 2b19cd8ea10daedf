import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountSecret } from 'src/accounts/account-secret.entity';
import { AccountSecretRepository } from 'src/accounts/account-secret.repository';
import { Account } from 'src/accounts/account.entity';
import { AccountRepository } from 'src/accounts/account.repository';
import { AccountsService } from 'src/accounts/accounts.service';
import { ChangeAcknowledgements } from 'src/accounts/credential-acks';
import { CredentialCache } from 'src/accounts/credential-cache';
import { CredentialChangeFeed } from 'src/accounts/credential-change-feed';
import { SecretKeyVerifier } from 'src/accounts/secret-key-check';
import { SecretReencryption } from 'src/accounts/secret-reencryption';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';

@Module({
  imports: [TypeOrmModule.forFeature([Account, AccountSecret]), DatabaseModule, AuditModule],
  // The cache stays unused (every look-up queries) unless CredentialListenerModule runs beside it.
  providers: [
    ...repositoryProviders(AccountRepository, AccountSecretRepository),
    AccountsService,
    SecretReencryption,
    SecretKeyVerifier,
    CredentialChangeFeed,
    { provide: CredentialCache, useFactory: () => new CredentialCache() },
    { provide: ChangeAcknowledgements, useFactory: () => new ChangeAcknowledgements() },
  ],
  exports: [AccountsService, SecretReencryption, SecretKeyVerifier, CredentialCache, ChangeAcknowledgements],
})
export class AccountsModule {}
