import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AccountsModule } from 'src/accounts/accounts.module';
import { AuthFailureLimit } from 'src/auth/auth-failure-limit';
import { CredentialGuard } from 'src/auth/credential.guard';
import { PublicRateLimiter } from 'src/auth/public-rate-limiter';
import { RateLimitModule } from 'src/auth/rate-limit/rate-limit.module';

/**
 * Who is calling: the credential guard of every API route, the public API's rate limiter, and the
 * limit on failed admin, internal and dashboard credentials.
 */
@Module({
  imports: [AccountsModule, RateLimitModule],
  providers: [{ provide: APP_GUARD, useClass: CredentialGuard }, PublicRateLimiter, AuthFailureLimit],
  exports: [PublicRateLimiter, AuthFailureLimit],
})
export class AuthModule {}
