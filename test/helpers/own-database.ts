import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { migrationDataSourceOptions } from 'src/database/migration-options';

/** Runs one statement on the server's maintenance database, beside the one in the URL. */
export async function onServer(databaseUrl: string, sql: string): Promise<void> {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Builds the schema as `npm run migration:run` does (src/database/migrate.ts imports Nest, which Jest cannot load). */
export async function migrate(databaseUrl: string): Promise<void> {
  const migrator = new DataSource(migrationDataSourceOptions(databaseUrl));
  await migrator.initialize();
  try {
    await migrator.runMigrations({ transaction: 'each' });
  } finally {
    await migrator.destroy();
  }
}

/**
 * A database of the spec's own beside the run's (`<run database>_<suffix>`), migrated, for a spec that
 * needs what no other spec has written (the run's database is shared by every spec of the run).
 */
export async function ownDatabase(suffix: string, migrated = true): Promise<{ url: string; drop(): Promise<void> }> {
  const url = `${process.env.DATABASE_URL}_${suffix}`;
  const name = new URL(url).pathname.slice(1);
  if (!/test/.test(name)) throw new Error(`Refusing to use database ${name}: its name does not say test`);
  await onServer(url, `CREATE DATABASE "${name}"`);
  if (migrated) await migrate(url);
  return { url, drop: () => onServer(url, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}
