import Redis from 'ioredis';

/** Deletes every Redis key under `prefix` (this run's queues); refuses a prefix that does not say test. */
export async function clearQueueKeys(prefix: string, redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379') {
  if (!/test/.test(prefix)) throw new Error(`Refusing to clear queue prefix ${prefix}: it does not say test`);
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
