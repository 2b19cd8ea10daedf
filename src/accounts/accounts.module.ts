import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountSecret } from 'src/accounts/account-secret.entity';
import { Account } from 'src/accounts/account.entity';
import { AccountsService } from 'src/accounts/accounts.service';
import { AdminAccountsController } from 'src/accounts/admin-accounts.controller';

@Module({
  imports: [TypeOrmModule.forFeature([Account, AccountSecret])],
  controllers: [AdminAccountsController],
  providers: [AccountsService],
  exports: [AccountsService],
})
export class AccountsModule {}
