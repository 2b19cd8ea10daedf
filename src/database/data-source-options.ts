import type { DataSourceOptions } from 'typeorm';
import { refuseStandby } from 'src/database/primary-only';

/**
 * One definition for the app, the migration runner and the tests. No entities: each feature module
 * registers its own (TypeOrmModule.forFeature, loaded by DatabaseModule's autoLoadEntities), so
 * the database module knows no feature. With read URLs, TypeORM
 * replication: DATABASE_URL is the master for every write and every read by default; only reads
 * that ask for a 'slave' query runner (src/database/read-replica.ts) go to a replica.
 */
export function dataSourceOptions(
  databaseUrl: string,
  readUrls: readonly string[] = [],
  queryTimeoutMs?: number,
): DataSourceOptions {
  const target =
    readUrls.length === 0
      ? { url: databaseUrl }
      : {
          replication: {
            master: { url: databaseUrl },
            slaves: readUrls.map((url) => ({ url })),
            defaultMode: 'master' as const,
          },
        };
  return {
    type: 'postgres',
    ...target,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: poolSettings(queryTimeoutMs, databaseUrl),
  };
}

/** No request query takes near this; a silent PostgreSQL then answers 503 within about 2 x this (query, rollback). */
export const APP_QUERY_TIMEOUT_MS = 2_500;

/**
 * Server-side bounds of the app's statements, below APP_QUERY_TIMEOUT_MS: PostgreSQL gives a statement
 * up (and rolls it back) before the service stops waiting for it, so a 503 never leaves a statement
 * running that commits later, nor a session waiting on a lock for a request already answered. A lock
 * wait ends sooner, so one held row costs its own requests, not the pool's connections for long.
 */
export const APP_STATEMENT_TIMEOUT_MS = 2_000;
export const APP_LOCK_TIMEOUT_MS = 500;

/**
 * Connection-pool settings shared by TypeORM's pool and the raw one (src/database/pg-pool.ts). The
 * app's pools (with `queryTimeoutMs`) check that each new connection to `primaryUrl` reached the
 * primary (primary-only.ts); the migration runner's does not need to, as it writes nothing else.
 */
export function poolSettings(queryTimeoutMs?: number, primaryUrl?: string) {
  return {
    max: 20,
    // With PostgreSQL down, requests fail in about a second rather than hanging.
    connectionTimeoutMillis: 1_000,
    idleTimeoutMillis: 30_000,
    // Client-side: a server that goes silent (a partition, no reset) fails the query instead of
    // hanging the request. The app sets it; the migration runner (long index builds) does not.
    ...(queryTimeoutMs === undefined
      ? { statement_timeout: 15_000 }
      : {
          query_timeout: queryTimeoutMs,
          statement_timeout: Math.min(APP_STATEMENT_TIMEOUT_MS, queryTimeoutMs - 500),
          lock_timeout: APP_LOCK_TIMEOUT_MS,
          ...(primaryUrl === undefined ? {} : { onConnect: refuseStandby(primaryUrl) }),
        }),
  };
}
