import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { PublicRateLimiter } from 'src/auth/public-rate-limiter';
import { PUBLIC_API_MIDDLEWARE } from 'src/common/public-api-edge';

/** Registers the limiter as the public API's edge middleware (mounted by configureHttp). */
@Module({
  imports: [AccountsModule],
  providers: [
    PublicRateLimiter,
    { provide: PUBLIC_API_MIDDLEWARE, useFactory: (limiter: PublicRateLimiter) => limiter.handler, inject: [PublicRateLimiter] },
  ],
})
export class RateLimitModule {}
