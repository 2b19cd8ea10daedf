import Redis, { Cluster, type RedisOptions } from 'ioredis';

/** A Redis node of REDIS_CLUSTER_NODES. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/** Where Redis is: one server (REDIS_URL), or a cluster when REDIS_CLUSTER_NODES is set. */
export interface RedisTarget {
  readonly redisUrl: string;
  readonly redisClusterNodes: readonly RedisNode[];
}

export type RedisClient = Redis | Cluster;

/** REDIS_URL as ioredis options (Bull's own URL parsing drops TLS for rediss://). */
export function redisOptionsFromUrl(redisUrl: string): RedisOptions {
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

/**
 * The one place that picks a single server or a cluster; every Redis client of the service comes
 * from here. `options` are the caller's connection options; on a cluster they apply to each node,
 * except the offline queue and ready check, which are the cluster's own.
 */
export function createRedis(target: RedisTarget, options: RedisOptions = {}): RedisClient {
  if (target.redisClusterNodes.length === 0) {
    return new Redis({ ...redisOptionsFromUrl(target.redisUrl), ...options });
  }
  const { enableOfflineQueue, retryStrategy, ...perNode } = options;
  return new Cluster(
    target.redisClusterNodes.map((node) => ({ host: node.host, port: node.port })),
    {
      // Replicas may lag: queue state and counters are read where they are written.
      scaleReads: 'master',
      enableOfflineQueue: enableOfflineQueue ?? true,
      enableReadyCheck: true,
      clusterRetryStrategy: retryStrategy ?? ((attempt: number) => Math.min(attempt * 200, 2_000)),
      // A failover (node time-out + election) takes seconds: retry moved slots for that long.
      retryDelayOnFailover: 300,
      retryDelayOnClusterDown: 300,
      slotsRefreshTimeout: 2_000,
      redisOptions: { connectTimeout: 2_000, ...perNode },
    },
  );
}

/** `CLUSTER INFO` says the cluster serves every slot. */
export function clusterStateOk(info: string): boolean {
  return /^cluster_state:ok\r?$/m.test(info);
}

/** Throws unless Redis answers: PING on a server, `cluster_state:ok` on a cluster. */
export async function checkRedis(client: RedisClient): Promise<void> {
  if (client instanceof Cluster) {
    const info = (await client.cluster('INFO')) as string;
    if (!clusterStateOk(info)) throw new Error('redis cluster state is not ok');
    return;
  }
  await client.ping();
}

/**
 * The hash tag Redis Cluster hashes a key by: what lies between the first `{` and the next `}`,
 * if that is not empty. Keys that share it live in one slot, as Bull's scripts require.
 */
export function hashTagOf(key: string): string | null {
  const open = key.indexOf('{');
  if (open < 0) return null;
  const close = key.indexOf('}', open + 1);
  if (close <= open + 1) return null;
  return key.slice(open + 1, close);
}
