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

/**
 * Atomically adds ARGV[1] to the key's window (of ARGV[2] ms, started by its first take) unless that
 * would pass the limit ARGV[3]: returns { taken (1 or 0), count after, ms until the window ends }.
 */
const TAKE_SCRIPT = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
local amount = tonumber(ARGV[1])
if count + amount > tonumber(ARGV[3]) then
  if ttl < 0 then ttl = tonumber(ARGV[2]) end
  return { 0, count, ttl }
end
count = redis.call('INCRBY', KEYS[1], amount)
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return { 1, count, ttl }`;

/** Takes back ARGV[1] from a window that still exists (an ended window must not start negative, with no expiry). */
const GIVE_BACK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECRBY', KEYS[1], ARGV[1]) end
return 0`;

type CountingRedis = RedisClient & {
  rateLimitGiveBack(key: string, amount: number): Promise<number>;
  rateLimitHit(key: string, windowMs: number): Promise<[number, number]>;
  rateLimitTake(key: string, amount: number, windowMs: number, limit: number): Promise<[number, number, number]>;
};

/** What is counted: public requests, failed credentials, test events, redelivered events. Each has its own keys. */
export type LimitScope = 'ratelimit' | 'authfail' | 'testevents' | 'redeliveries';

/** A take of several units at once: all of them, or none when they would pass the limit. */
export interface Take {
  taken: boolean;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

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
    const used =
      config.rateLimitPerMinute +
        config.authFailureLimitPerMinute +
        config.testEventsPerMinute +
        config.redeliveriesPerHour >
      0;
    if (!used) {
      this.redis = null;
      return;
    }
    const client = createFailFastRedis(config, (message, state) => {
      rateLimitMemoryFallback.set(state === 'down' ? 1 : 0);
      this.logger.warn(state === 'down' ? `${message}; limits count per process meanwhile` : message);
    });
    client.defineCommand('rateLimitHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    client.defineCommand('rateLimitTake', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    client.defineCommand('rateLimitGiveBack', { numberOfKeys: 1, lua: GIVE_BACK_SCRIPT });
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

  /**
   * Takes `amount` units of `key`'s window of `windowMs` if they fit under `limit`, else none; never
   * throws. Counted in Redis, or in this process while Redis does not answer (as `hit`).
   */
  async take(scope: LimitScope, key: string, amount: number, limit: number, windowMs: number): Promise<Take> {
    if (this.redis) {
      try {
        const [taken, , resetMs] = await this.redis.rateLimitTake(
          `${this.keyPrefix}${scope}:${key}`,
          amount,
          windowMs,
          limit,
        );
        rateLimitMemoryFallback.set(0);
        return { taken: taken === 1, resetMs };
      } catch {
        rateLimitMemoryFallback.set(1);
      }
    }
    return this.fallback(fallbackStoreOf(scope, key), windowMs).take(key, amount, limit, Date.now());
  }

  /** Gives back units a take counted for work that then did not happen (best effort). */
  async giveBack(scope: LimitScope, key: string, amount: number, windowMs: number): Promise<void> {
    if (this.redis) {
      try {
        await this.redis.rateLimitGiveBack(`${this.keyPrefix}${scope}:${key}`, amount);
        return;
      } catch {
        // Not counted back in Redis: the window ends on its own.
      }
    }
    this.fallback(fallbackStoreOf(scope, key), windowMs).giveBack(key, amount, Date.now());
  }

  private fallback(store: string, windowMs?: number): MemoryWindowStore {
    let found = this.fallbacks.get(store);
    if (!found) {
      found = new MemoryWindowStore(undefined, windowMs);
      this.fallbacks.set(store, found);
    }
    return found;
  }

  onModuleDestroy(): void {
    this.redis?.disconnect();
  }
}
