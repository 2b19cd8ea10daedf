import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import Redis from 'ioredis';
import { AccountsService } from 'src/accounts/accounts.service';
import { clientAccountId } from 'src/auth/client-credential';
import { RATE_LIMIT_WINDOW_MS, RateLimitDecision, decide, failOpen } from 'src/auth/rate-limit-policy';
import { ApiError } from 'src/common/api-error';
import { createFailFastRedis } from 'src/common/fail-fast-redis';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/** Atomically counts a hit in the key's window, starting the window on its first hit. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { count, ttl }`;

type CountingRedis = Redis & { rateLimitHit(key: string, windowMs: number): Promise<[number, number]> };

function setHeaders(res: Response, decision: RateLimitDecision): void {
  for (const [name, value] of Object.entries(decision.headers)) res.setHeader(name, value);
}

/**
 * Per-account limit on the public API, counted in Redis so that every API process shares it.
 * Requests without a valid credential are counted per client address instead (so credential
 * guessing is throttled too). When Redis does not answer within 250 ms the request is served
 * uncounted: the limiter fails open rather than taking the API down with Redis.
 */
@Injectable()
export class PublicRateLimiter implements OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: CountingRedis | null;
  private readonly limit: number;
  private readonly keyPrefix: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly accounts: AccountsService,
  ) {
    this.limit = config.rateLimitPerMinute;
    this.keyPrefix = `${config.queuePrefix}:ratelimit:`;
    if (this.limit === 0) {
      this.redis = null;
      return;
    }
    const client = createFailFastRedis(config.redisUrl, (message) =>
      this.logger.warn(`${message}; rate limits are not enforced meanwhile`),
    );
    client.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.redis = client as CountingRedis;
  }

  readonly handler: RequestHandler = (req: Request, res: Response, next: NextFunction) => {
    if (!this.redis) return next();
    this.check(req, this.redis).then(
      (decision) => {
        setHeaders(res, decision);
        if (decision.allowed) return next();
        next(
          new ApiError('rate_limited', `Rate limit of ${this.limit} requests per minute exceeded`, [], {
            'Retry-After': decision.headers['Retry-After'],
          }),
        );
      },
      (error: unknown) => {
        // The credential look-up failed (PostgreSQL unreachable): the error is the answer, and it
        // still carries the headers every public response does.
        setHeaders(res, failOpen(this.limit, Date.now()));
        next(error);
      },
    );
  };

  private async check(req: Request, redis: CountingRedis): Promise<RateLimitDecision> {
    const accountId = await clientAccountId(req, this.accounts);
    const bucket = accountId ? `account:${accountId}` : `address:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;
    try {
      const [count, resetMs] = await redis.rateLimitHit(this.keyPrefix + bucket, RATE_LIMIT_WINDOW_MS);
      return decide(this.limit, { count, resetMs });
    } catch {
      return failOpen(this.limit, Date.now());
    }
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }
}
