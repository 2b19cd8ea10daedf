import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { createFailFastRedis } from 'src/redis/fail-fast-redis';
import type { RedisClient } from 'src/redis/redis-connection';
import { fallbackStoreOf, MemoryWindowStore } from 'src/auth/rate-limit/memory-window-store';
import { RATE_LIMIT_WINDOW_MS, type WindowCount } from 'src/auth/rate-limit/rate-limit-policy';
import { rateLimitMemoryFallback } from 'src/auth/rate-limit/rate-limit-metrics';
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

type CountingRedis = RedisClient & { rateLimitHit(key: string, windowMs: number): Promise<[number, number]> };

/** What is counted: public requests, failed credentials, test events. Each has its own keys. */
export type LimitScope = 'ratelimit' | 'authfail' | 'testevents';

/**
 * The fixed-window counter behind every limit: counted in Redis (under QUEUE_PREFIX) so that all
 * API processes share it, and per process in memory while Redis does not answer within 250 ms, so
 * a limit still holds during an outage. Each hit goes to Redis first, so counting returns to Redis
 * as soon as it answers again. rate_limit_memory_fallback is 1 from a lost connection or a hit Redis
 * did not count until the connection is back or a hit is counted in Redis.
 */
@Injectable()
export class WindowCounter implements OnModuleDestroy {
  private readonly logger = new Logger('RateLimit');
  private readonly redis: CountingRedis | null;
  private readonly keyPrefix: string;
  private readonly fallbacks = new Map<string, MemoryWindowStore>();

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.keyPrefix = `${config.queuePrefix}:`;
    const used = config.rateLimitPerMinute + config.authFailureLimitPerMinute + config.testEventsPerMinute > 0;
    if (!used) {
      this.redis = null;
      return;
    }
    const client = createFailFastRedis(config, (message, state) => {
      rateLimitMemoryFallback.set(state === 'down' ? 1 : 0);
      this.logger.warn(state === 'down' ? `${message}; limits count per process meanwhile` : message);
    });
    client.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.redis = client as CountingRedis;
  }

  /** Counts one hit of `key` in its current window; never throws. */
  async hit(scope: LimitScope, key: string): Promise<WindowCount> {
    if (this.redis) {
      try {
        const [count, resetMs] = await this.redis.rateLimitHit(
          `${this.keyPrefix}${scope}:${key}`,
          RATE_LIMIT_WINDOW_MS,
        );
        rateLimitMemoryFallback.set(0);
        return { count, resetMs };
      } catch {
        // Redis down or slow: this process's own count stands in.
        rateLimitMemoryFallback.set(1);
      }
    }
    return this.fallback(fallbackStoreOf(scope, key)).hit(key, Date.now());
  }

  private fallback(store: string): MemoryWindowStore {
    let found = this.fallbacks.get(store);
    if (!found) {
      found = new MemoryWindowStore();
      this.fallbacks.set(store, found);
    }
    return found;
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }
}
