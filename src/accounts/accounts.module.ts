import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountSecret } from 'src/accounts/account-secret.entity';
import { Account } from 'src/accounts/account.entity';
import { AccountsService } from 'src/accounts/accounts.service';
import { AdminAccountsController } from 'src/accounts/admin-accounts.controller';
import { CredentialCache } from 'src/accounts/credential-cache';

@Module({
  imports: [TypeOrmModule.forFeature([Account, AccountSecret])],
  controllers: [AdminAccountsController],
  // The cache stays unused (every look-up queries) unless CredentialListenerModule runs beside it.
  providers: [AccountsService, { provide: CredentialCache, useFactory: () => new CredentialCache() }],
  exports: [AccountsService, CredentialCache],
})
export class AccountsModule {}
