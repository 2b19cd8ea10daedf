import Bull, { Queue, QueueOptions } from 'bull';
import type { RedisOptions } from 'ioredis';
import { createRedis, redisOptionsFromUrl, type RedisClient } from 'src/redis/redis-connection';
import type { AppConfig } from 'src/config/app-config';
import { retryBackoff } from 'src/webhooks/queue/delivery-retry';
import {
  DELIVERY_JOB_OPTIONS,
  DELIVERY_QUEUE,
  DELIVERY_QUEUE_SETTINGS,
  RETRY_BACKOFF,
} from 'src/webhooks/queue/webhook-queue.constants';

/** Kept under its old name for the demo and the benchmarks. */
export const redisOptions = redisOptionsFromUrl;

/** Bull refuses a blocking or subscriber client that retries per request or checks readiness. */
const BLOCKING_CLIENT: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: false };

/** The clients made for a queue by createClient, found again from the queue's `client`. */
const madeClients = new WeakMap<object, RedisClient[]>();

/** Bull's `createClient` for a cluster: each of the queue's three connections is a Cluster. */
function clusterClients(config: AppConfig, connection: RedisOptions): NonNullable<QueueOptions['createClient']> {
  const clients: RedisClient[] = [];
  return (type) => {
    const client = createRedis(config, type === 'client' ? connection : BLOCKING_CLIENT);
    clients.push(client);
    madeClients.set(client, clients);
    // Bull's typings predate ioredis 5's Cluster; at run time Bull takes either.
    return client as unknown as ReturnType<NonNullable<QueueOptions['createClient']>>;
  };
}

/**
 * Options of the queue the workers process (also used by @nestjs/bull's registerQueueAsync). On a
 * cluster the prefix carries the hash tag (checked at boot), so each of Bull's scripts stays in one slot.
 */
export function deliveryQueueOptions(config: AppConfig, connection: RedisOptions = {}): QueueOptions {
  const queue: QueueOptions = {
    prefix: config.queuePrefix,
    defaultJobOptions: DELIVERY_JOB_OPTIONS,
    settings: { ...DELIVERY_QUEUE_SETTINGS, backoffStrategies: { [RETRY_BACKOFF]: retryBackoff } },
  };
  if (config.redisClusterNodes.length > 0) return { ...queue, createClient: clusterClients(config, connection) };
  return { ...queue, redis: { ...redisOptionsFromUrl(config.redisUrl), ...connection } };
}

/** Closes a queue; Bull leaves open the clients it did not make itself (a cluster's), so they are closed here. */
export async function closeDeliveryQueue(queue: Queue): Promise<void> {
  try {
    await queue.close();
  } finally {
    for (const client of madeClients.get(queue.client) ?? []) client.disconnect();
  }
}

/**
 * The queue the API enqueues on: its Redis client fails at once while disconnected instead of
 * buffering, so a request never waits on Redis (the sweeper relays what could not be enqueued).
 */
export function createProducerQueue(config: AppConfig): Queue {
  const queue = new Bull(
    DELIVERY_QUEUE,
    deliveryQueueOptions(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 2_000 }),
  );
  queue.on('error', () => undefined);
  return queue;
}
