import { Module } from '@nestjs/common';
import { WindowCounter } from 'src/auth/rate-limit/window-counter';

/** One shared counter (one Redis connection) for every limit of the process. */
@Module({ providers: [WindowCounter], exports: [WindowCounter] })
export class RateLimitModule {}
