import { Inject, Injectable } from '@nestjs/common';
import { WindowCounter } from 'src/auth/rate-limit/window-counter';
import { ApiError } from 'src/common/api-error';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { webhookRedeliveries } from 'src/webhooks/queue/webhook-metrics';

/** The redeliver routes' own limit, as ApiLimitedBy names it to the OpenAPI builder. */
export const REDELIVERIES_LIMIT = 'redeliveries';

const HOUR_MS = 3_600_000;

/** The 429 of REDELIVERIES_PER_HOUR. */
export function redeliveriesRefused(limit: number, retryAfter: string): ApiError {
  return new ApiError(
    'rate_limited',
    `Redelivery limit of ${limit} events per hour exceeded; nothing was redelivered`,
    [],
    { 'Retry-After': retryAfter },
  );
}

/**
 * Each redelivered event is a signed POST (and a retry schedule) to the host the client chose, so an
 * account redelivers at most REDELIVERIES_PER_HOUR events an hour, single and bulk together: counted
 * in Redis across API processes (per process while Redis does not answer), a call that would pass it
 * refused whole.
 */
@Injectable()
export class RedeliveryLimit {
  private readonly limit: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly counter: WindowCounter,
  ) {
    this.limit = config.redeliveriesPerHour;
  }

  /**
   * Runs `transaction`, which starts the new cycles and passes them to `count` before it commits:
   * `count` throws 429 `rate_limited` when they would pass the limit, so the transaction rolls back
   * and nothing is redelivered. A transaction that fails after counting gives the count back.
   */
  async within<T>(
    accountId: string,
    transaction: (count: (started: T[]) => Promise<void>) => Promise<T[]>,
  ): Promise<T[]> {
    let taken = 0;
    try {
      const started = await transaction(async (started) => {
        if (this.limit === 0 || started.length === 0) return;
        const take = await this.counter.take(
          'redeliveries',
          `account:${accountId}`,
          started.length,
          this.limit,
          HOUR_MS,
        );
        if (!take.taken) throw redeliveriesRefused(this.limit, String(Math.max(1, Math.ceil(take.resetMs / 1000))));
        taken = started.length;
      });
      webhookRedeliveries.inc(started.length);
      return started;
    } catch (error) {
      if (taken > 0) await this.counter.giveBack('redeliveries', `account:${accountId}`, taken, HOUR_MS);
      throw error;
    }
  }
}
