import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { APP_GUARD } from '@nestjs/core';
import { AccountsModule } from 'src/accounts/accounts.module';
import { AuthFailureLimit } from 'src/auth/auth-failure-limit';
import { CredentialGuard } from 'src/auth/credential.guard';
import { OperatorCredentials } from 'src/auth/operator-credential';
import { OperatorsModule } from 'src/operators/operators.module';
import { PublicRateLimiter } from 'src/auth/public-rate-limiter';
import { RateLimitModule } from 'src/auth/rate-limit/rate-limit.module';

/**
 * Who is calling: the credential guard of every API route, the public API's rate limiter, and the
 * limit on failed admin, internal and dashboard credentials.
 */
@Module({
  imports: [AccountsModule, OperatorsModule, RateLimitModule, AuditModule],
  providers: [
    { provide: APP_GUARD, useClass: CredentialGuard },
    PublicRateLimiter,
    AuthFailureLimit,
    OperatorCredentials,
  ],
  exports: [PublicRateLimiter, AuthFailureLimit, OperatorCredentials],
})
export class AuthModule {}
