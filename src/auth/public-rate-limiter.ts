import { Inject, Injectable } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AccountsService } from 'src/accounts/accounts.service';
import { clientAccountId } from 'src/auth/client-credential';
import { ApiError } from 'src/common/api-error';
import { clientAddress } from 'src/auth/client-address';
import { RateLimitDecision, decide, uncounted } from 'src/auth/rate-limit/rate-limit-policy';
import { WindowCounter } from 'src/auth/rate-limit/window-counter';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

function setHeaders(res: Response, decision: RateLimitDecision): void {
  for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
}

/** The 429 of the per-account limit on the public API. */
export function requestsRefused(limit: number, retryAfter: string): ApiError {
  return new ApiError('rate_limited', `Rate limit of ${limit} requests per minute exceeded`, [], {
    'Retry-After': retryAfter,
  });
}

/**
 * Per-account limit on the public API, counted by WindowCounter (Redis, per process while Redis is
 * down). Requests without a valid credential are counted per client address instead, so credential
 * guessing is throttled too.
 */
@Injectable()
export class PublicRateLimiter {
  private readonly limit: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly accounts: AccountsService,
    private readonly counter: WindowCounter,
  ) {
    this.limit = config.rateLimitPerMinute;
  }

  readonly handler: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    if (this.limit === 0) return next();
    this.check(req).then(
      (decision) => {
        setHeaders(res, decision);
        if (decision.allowed) return next();
        next(requestsRefused(this.limit, decision.headers['Retry-After']));
      },
      (error: unknown) => {
        // The credential look-up failed (PostgreSQL unreachable): the error is the answer, and it
        // still carries the headers every public response does.
        setHeaders(res, uncounted(this.limit, Date.now()));
        next(error);
      },
    );
  };

  private async check(req: Request): Promise<RateLimitDecision> {
    const accountId = await clientAccountId(req, this.accounts);
    const bucket = accountId ? `account:${accountId}` : `address:${clientAddress(req)}`;
    return decide(this.limit, await this.counter.hit('ratelimit', bucket));
  }
}
