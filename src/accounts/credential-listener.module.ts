import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { CredentialListener } from 'src/accounts/credential-listener';

/** Only in processes that serve the API: it turns their credential cache on (see CredentialListener). */
@Module({ imports: [AccountsModule], providers: [CredentialListener] })
export class CredentialListenerModule {}
