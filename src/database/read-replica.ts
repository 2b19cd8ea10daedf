import type { DataSource, EntityManager } from 'typeorm';

/**
 * Runs a read on a replica (DATABASE_READ_URLS) when replication is configured, else on the one
 * database. Only for reads a client may see a moment late: never inside a write's transaction.
 */
export async function onReplica<T>(dataSource: DataSource, read: (manager: EntityManager) => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner('slave');
  try {
    return await read(runner.manager);
  } finally {
    await runner.release();
  }
}

/** Runs a read on the primary (DATABASE_URL), for a caller that must see its own write. */
export async function onPrimary<T>(dataSource: DataSource, read: (manager: EntityManager) => Promise<T>): Promise<T> {
  const runner = dataSource.createQueryRunner('master');
  try {
    return await read(runner.manager);
  } finally {
    await runner.release();
  }
}
