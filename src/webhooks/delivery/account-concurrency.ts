import type { RedisClient } from 'src/redis/redis-connection';
import { MicroBatcher } from 'src/common/micro-batcher';
import { type Lane, maintenanceSlots } from 'src/webhooks/queue/delivery-job';

// KEYS: the account zset of each request, in request order (an account may appear more than once),
// then each one's "waiting" flag; ARGV: now, expiry, then a limit and a member per request. Expired
// members are slots of a worker that died mid-delivery; dropping them first lets its slots free
// themselves. A refusal sets the account's flag (until the expiry), which tells the releases that
// an event is waiting its turn. Returns 1 (acquired), 0 (refused) or 2 (refused while a member
// named `maintenance:…` holds a slot) per request. One script call serves every delivery that
// reached this step in the same turn.
const ACQUIRE = `
local now, expiry = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = #KEYS / 2
local swept = {}
local acquired = {}
for i = 1, n do
  local key = KEYS[i]
  if not swept[key] then
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    swept[key] = true
  end
  if redis.call('ZCARD', key) < tonumber(ARGV[1 + 2 * i]) then
    redis.call('ZADD', key, expiry, ARGV[2 + 2 * i])
    redis.call('PEXPIRE', key, math.max(1, expiry - now))
    acquired[i] = 1
  else
    redis.call('SET', KEYS[n + i], '1', 'PX', math.max(1, expiry - now))
    acquired[i] = 0
    for _, member in ipairs(redis.call('ZRANGE', key, 0, -1)) do
      if string.sub(member, 1, 12) == 'maintenance:' then acquired[i] = 2 break end
    end
  end
end
return acquired`;

// KEYS: the account zsets, then their "waiting" flags; ARGV: the member to remove from each, in the
// same order. Returns 1 per account whose flag is set (an event of it waits its turn), else 0.
const RELEASE = `
local n = #KEYS / 2
local waiting = {}
for i = 1, n do
  redis.call('ZREM', KEYS[i], ARGV[i])
  waiting[i] = redis.call('EXISTS', KEYS[n + i])
end
return waiting`;

type SlotsRedis = RedisClient & {
  acquireWebhookSlots(...args: (string | number)[]): Promise<number[]>;
  releaseWebhookSlots(...args: (string | number)[]): Promise<number[]>;
};

/**
 * A refused fresh delivery, while a maintenance delivery of its account holds a slot: its job tries
 * again this soon (in its lane, ahead of maintenance jobs) and takes the next slot free, instead of
 * waiting its turn behind the account's backlog.
 */
export const BEHIND_MAINTENANCE = 'behind maintenance';
export const BEHIND_MAINTENANCE_RETRY_MS = 250;
export type Acquired = boolean | typeof BEHIND_MAINTENANCE;

/** The slot of one delivery: its lane, then the caller's unique name. */
export function slotMember(lane: Lane, name: string): string {
  return `${lane}:${name}`;
}

interface Slot {
  accountId: string;
  member: string;
}

interface Request extends Slot {
  limit: number;
  fresh: boolean;
}

/**
 * At most `limit` deliveries of one account in flight across every worker process: a sorted set
 * per account whose members expire, so a killed worker never holds a slot for good. A delivery of
 * the maintenance lane is refused once the account has `maintenanceSlots(limit)` in flight, so the
 * rest stay free for its fresh changes. Members are named by their lane first (`slotMember`), so a
 * fresh delivery refused while maintenance holds slots is told so: one of those ends soon, and
 * maintenance cannot take it back. Acquires and releases made in the same turn of the event loop
 * travel together, one script call each.
 */
export class AccountConcurrency {
  private readonly redis: SlotsRedis;
  private readonly acquiring = new MicroBatcher<Request, Acquired>((slots) => this.acquireMany(slots));
  private readonly releasing = new MicroBatcher<Slot, boolean>((slots) => this.releaseMany(slots));

  constructor(
    redis: RedisClient,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly holdMs: number,
  ) {
    // Sent by SHA (EVALSHA) once Redis knows the script, not as its full text every time.
    if (!('acquireWebhookSlots' in redis)) redis.defineCommand('acquireWebhookSlots', { lua: ACQUIRE });
    if (!('releaseWebhookSlots' in redis)) redis.defineCommand('releaseWebhookSlots', { lua: RELEASE });
    this.redis = redis as SlotsRedis;
  }

  // Built on the queue prefix, whose hash tag puts every account's key in one cluster slot, as a
  // script over several accounts requires.
  private key(accountId: string): string {
    return `${this.prefix}:webhook-slots:${accountId}`;
  }

  /** A slot for a delivery of `lane` (its member from `slotMember`): refused when the account has as many in flight as that lane may take. */
  acquire(accountId: string, member: string, lane: Lane): Promise<Acquired> {
    const limit = lane === 'fresh' ? this.limit : maintenanceSlots(this.limit);
    return this.acquiring.submit({ accountId, member, limit, fresh: lane === 'fresh' });
  }

  /** Frees the slot; true when an event of the account waits its turn (a delivery of it was refused a slot lately). */
  release(accountId: string, member: string): Promise<boolean> {
    return this.releasing.submit({ accountId, member });
  }

  /** Whether the account has a slot free now for the maintenance lane, which its waiting events go out by. */
  async hasRoom(accountId: string): Promise<boolean> {
    return (await this.redis.zcount(this.key(accountId), `(${Date.now()}`, '+inf')) < maintenanceSlots(this.limit);
  }

  /** How many slots each account holds now, for the relay's measure of its room (expired members not counted). */
  async held(accountIds: string[]): Promise<Map<string, number>> {
    const pipeline = this.redis.pipeline();
    for (const accountId of accountIds) pipeline.zcount(this.key(accountId), `(${Date.now()}`, '+inf');
    const counts = await pipeline.exec();
    return new Map(
      accountIds.map((accountId, i) => {
        const [error, count] = counts?.[i] ?? [new Error('no reply')];
        if (error) throw error;
        return [accountId, Number(count)];
      }),
    );
  }

  /** Events of these accounts wait their turn (the relay set them aside): their releases say so, as after a refusal. */
  async markWaiting(accountIds: string[]): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const accountId of accountIds) pipeline.set(this.waitingKey(accountId), '1', 'PX', this.holdMs);
    for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
  }

  private waitingKey(accountId: string): string {
    return `${this.key(accountId)}:waiting`;
  }

  private keysOf(slots: Slot[]): string[] {
    return [...slots.map((slot) => this.key(slot.accountId)), ...slots.map((slot) => this.waitingKey(slot.accountId))];
  }

  private async acquireMany(slots: Request[]): Promise<Acquired[]> {
    const now = Date.now();
    const keys = this.keysOf(slots);
    const result = await this.redis.acquireWebhookSlots(
      keys.length,
      ...keys,
      now,
      now + this.holdMs,
      ...slots.flatMap((slot) => [slot.limit, slot.member]),
    );
    return result.map((acquired, i) => acquired === 1 || (acquired === 2 && slots[i].fresh && BEHIND_MAINTENANCE));
  }

  private async releaseMany(slots: Slot[]): Promise<boolean[]> {
    const keys = this.keysOf(slots);
    const waiting = await this.redis.releaseWebhookSlots(keys.length, ...keys, ...slots.map((slot) => slot.member));
    return waiting.map((flag) => flag === 1);
  }
}
