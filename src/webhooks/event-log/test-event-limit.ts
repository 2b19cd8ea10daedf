import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from 'src/common/api-error';
import { decide } from 'src/auth/rate-limit/rate-limit-policy';
import { WindowCounter } from 'src/auth/rate-limit/window-counter';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/** The test-event route's own limit, as ApiLimitedBy names it to the OpenAPI builder. */
export const TEST_EVENTS_LIMIT = 'testEvents';

/** The 429 of TEST_EVENTS_PER_MINUTE. */
export function testEventsRefused(limit: number, retryAfter: string): ApiError {
  return new ApiError('rate_limited', `Test event limit of ${limit} per minute exceeded`, [], {
    'Retry-After': retryAfter,
  });
}

/** Each test event writes a row and queues a delivery, so an account gets TEST_EVENTS_PER_MINUTE of them. */
@Injectable()
export class TestEventLimit {
  private readonly limit: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly counter: WindowCounter,
  ) {
    this.limit = config.testEventsPerMinute;
  }

  /** Counts one test event of the account; throws 429 `rate_limited` over the limit. */
  async take(accountId: string): Promise<void> {
    if (this.limit === 0) return;
    const decision = decide(this.limit, await this.counter.hit('testevents', `account:${accountId}`));
    if (!decision.allowed) throw testEventsRefused(this.limit, decision.headers['Retry-After']);
  }
}
