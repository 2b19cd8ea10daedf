import Bull, { Queue, QueueOptions } from 'bull';
import type { RedisOptions } from 'ioredis';
import type { AppConfig } from 'src/config/app-config';
import { retryBackoff } from 'src/webhooks/delivery-retry';
import {
  DELIVERY_JOB_OPTIONS,
  DELIVERY_QUEUE,
  DELIVERY_QUEUE_SETTINGS,
  RETRY_BACKOFF,
} from 'src/webhooks/webhook-queue.constants';

/** REDIS_URL as ioredis options (Bull's own URL parsing drops TLS for rediss://). */
export function redisOptions(redisUrl: string): RedisOptions {
  const url = new URL(redisUrl);
  const db = url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0;
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port ? Number(url.port) : 6379,
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    db: Number.isInteger(db) ? db : 0,
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
    connectTimeout: 2_000,
  };
}

/** Options of the queue the workers process (also used by @nestjs/bull's registerQueueAsync). */
export function deliveryQueueOptions(config: AppConfig): QueueOptions {
  return {
    prefix: config.queuePrefix,
    redis: redisOptions(config.redisUrl),
    defaultJobOptions: DELIVERY_JOB_OPTIONS,
    settings: { ...DELIVERY_QUEUE_SETTINGS, backoffStrategies: { [RETRY_BACKOFF]: retryBackoff } },
  };
}

/**
 * The queue the API enqueues on: its Redis client fails at once while disconnected instead of
 * buffering, so a request never waits on Redis (the sweeper relays what could not be enqueued).
 */
export function createProducerQueue(config: AppConfig): Queue {
  const queue = new Bull(DELIVERY_QUEUE, {
    ...deliveryQueueOptions(config),
    redis: {
      ...redisOptions(config.redisUrl),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 2_000,
    },
  });
  queue.on('error', () => undefined);
  return queue;
}
