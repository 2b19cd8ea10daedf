import type { DataSourceOptions } from 'typeorm';
import { dataSourceOptions } from 'src/database/data-source-options';
import { MIGRATIONS } from '../../migrations';

/**
 * For the migration runner (and the tests that build a schema): the migrations, no statement
 * time-out, as index builds on a large table may run for minutes; no entities, as the entities'
 * generated column would make TypeORM add its typeorm_metadata table to the schema. Apart from
 * data-source-options.ts, which the app's processes load without the migrations. Migrations never
 * import src/ (`npm run check:cycles` fails if one does): what they do is fixed when they are written.
 */
export function migrationDataSourceOptions(databaseUrl: string): DataSourceOptions {
  const options = dataSourceOptions(databaseUrl);
  return {
    ...options,
    migrations: MIGRATIONS,
    extra: { ...options.extra, statement_timeout: 0 },
  } as DataSourceOptions;
}
