import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { AdminAccountsController } from 'src/admin/admin-accounts.controller';
import { WebhooksModule } from 'src/webhooks/webhooks.module';

/** The admin API's account routes: the accounts feature and the account's webhook endpoint. */
@Module({ imports: [AccountsModule, WebhooksModule], controllers: [AdminAccountsController] })
export class AdminModule {}
