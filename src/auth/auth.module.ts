import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccountsModule } from 'src/accounts/accounts.module';
import { CredentialGuard } from 'src/auth/credential.guard';
import { PublicRateLimiter } from 'src/auth/public-rate-limiter';

/** Who is calling: the credential guard of every API route, and the public API's rate limiter. */
@Module({
  imports: [AccountsModule],
  providers: [{ provide: APP_GUARD, useClass: CredentialGuard }, PublicRateLimiter],
  exports: [PublicRateLimiter],
})
export class AuthModule {}
