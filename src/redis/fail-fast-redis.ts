import { createRedis, type RedisClient, type RedisTarget } from 'src/redis/redis-connection';

/**
 * A Redis connection for checks that must never wait on Redis: while it is down, commands fail at
 * once (no offline queue) or after a short time-out, and the client keeps reconnecting behind.
 * `log` gets one line per outage and one when it ends, not one per reconnection attempt.
 */
export function createFailFastRedis(
  target: RedisTarget,
  log: (message: string, state: 'down' | 'up') => void,
  commandTimeoutMs = 250,
): RedisClient {
  const client = createRedis(target, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 1_000,
    enableReadyCheck: false,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  let down = false;
  client.on('error', (error: Error) => {
    if (!down) log(`redis unavailable: ${error.message}`, 'down');
    down = true;
  });
  client.on('ready', () => {
    if (down) log('redis connection restored', 'up');
    down = false;
  });
  return client;
}
