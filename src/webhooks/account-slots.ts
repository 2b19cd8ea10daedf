import type { Redis } from 'ioredis';

// KEYS[1] the account's zset; ARGV: now, member, expiry, limit. Expired members are slots of a
// worker that died mid-delivery; dropping them first lets its slots free themselves.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[4]) then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(ARGV[3]) - tonumber(ARGV[1])))
  return 1
end
return 0`;

/**
 * At most `limit` deliveries of one account in flight across every worker process: a sorted set
 * per account whose members expire, so a killed worker never holds a slot for good.
 */
export class AccountSlots {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly holdMs: number,
  ) {}

  private key(accountId: string): string {
    return `${this.prefix}:webhook-slots:${accountId}`;
  }

  async acquire(accountId: string, member: string): Promise<boolean> {
    const now = Date.now();
    const result = await this.redis.eval(ACQUIRE, 1, this.key(accountId), now, member, now + this.holdMs, this.limit);
    return result === 1;
  }

  async release(accountId: string, member: string): Promise<void> {
    await this.redis.zrem(this.key(accountId), member);
  }
}
