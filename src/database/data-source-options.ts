import type { DataSourceOptions } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { ENTITIES } from 'src/database/entities';

/** One definition for the app, the migration runner and the tests. */
export function dataSourceOptions(databaseUrl: string): DataSourceOptions {
  return {
    type: 'postgres',
    url: databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    logging: false,
    extra: {
      max: 20,
      // With PostgreSQL down, requests fail in about a second rather than hanging.
      connectionTimeoutMillis: 1_000,
      idleTimeoutMillis: 30_000,
      statement_timeout: 15_000,
    },
  };
}
