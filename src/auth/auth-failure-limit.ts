import { Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ApiError } from 'src/common/api-error';
import { clientAddress } from 'src/auth/client-address';
import { decide } from 'src/auth/rate-limit/rate-limit-policy';
import { WindowCounter } from 'src/auth/rate-limit/window-counter';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/** The 429 of AUTH_FAILURE_LIMIT_PER_MINUTE. */
export function authFailuresRefused(limit: number, retryAfter: string): ApiError {
  return new ApiError(
    'rate_limited',
    `Too many failed credentials from this address: limit of ${limit} per minute exceeded`,
    [],
    { 'Retry-After': retryAfter },
  );
}

/**
 * Failed admin, internal and dashboard credentials, counted per source address (one count for the
 * three). Only failures are counted and refused, so a valid credential always passes.
 */
@Injectable()
export class AuthFailureLimit {
  private readonly limit: number;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly counter: WindowCounter,
  ) {
    this.limit = config.authFailureLimitPerMinute;
  }

  /** The answer to a failed credential: `unauthorized`, or 429 once the address is over the limit. */
  async refusal(req: Request, unauthorized: ApiError): Promise<ApiError> {
    if (this.limit === 0) return unauthorized;
    const decision = decide(this.limit, await this.counter.hit('authfail', `address:${clientAddress(req)}`));
    return decision.allowed ? unauthorized : authFailuresRefused(this.limit, decision.headers['Retry-After']);
  }
}
