import type { DataSource, EntityManager } from 'typeorm';
import { isDatabaseUnavailable } from 'src/database/dependency-errors';

/** How long the replicas are passed over after one failed a read: a dead replica costs one failed try per period. */
const REPLICA_PAUSE_MS = 5_000;
const pausedUntil = new WeakMap<DataSource, number>();

const hasReplicas = (dataSource: DataSource): boolean =>
  'replication' in dataSource.options && !!dataSource.options.replication;

/**
 * Runs a read on a replica (DATABASE_READ_URLS) when replication is configured, else on the one
 * database. Only for reads a client may see a moment late: never inside a write's transaction.
 * Replicas degrade, never fail: a replica that cannot answer (down, restarting, promoted away) is
 * passed over for the primary, and for REPLICA_PAUSE_MS after, so reads go on while it is away.
 */
export async function onReplica<T>(dataSource: DataSource, read: (manager: EntityManager) => Promise<T>): Promise<T> {
  if (!hasReplicas(dataSource) || (pausedUntil.get(dataSource) ?? 0) > Date.now()) return onPrimary(dataSource, read);
  try {
    return await runOn(dataSource, 'slave', read);
  } catch (error) {
    if (!isDatabaseUnavailable(error)) throw error;
    pausedUntil.set(dataSource, Date.now() + REPLICA_PAUSE_MS);
    return onPrimary(dataSource, read);
  }
}

/** Runs a read on the primary (DATABASE_URL), for a caller that must see its own write. */
export function onPrimary<T>(dataSource: DataSource, read: (manager: EntityManager) => Promise<T>): Promise<T> {
  return runOn(dataSource, 'master', read);
}

async function runOn<T>(
  dataSource: DataSource,
  mode: 'master' | 'slave',
  read: (manager: EntityManager) => Promise<T>,
): Promise<T> {
  const runner = dataSource.createQueryRunner(mode);
  try {
    return await read(runner.manager);
  } finally {
    await runner.release();
  }
}
