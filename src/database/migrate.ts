import 'reflect-metadata';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { migrationDataSourceOptions } from 'src/database/migration-options';

/** Creates the database named in the URL when it does not exist yet. */
export async function createDatabaseIfMissing(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    }
  } catch (error) {
    // Another process may have created it between the check and the create.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
}

/** Applies pending migrations; idempotent, and serialised across concurrent runners. */
export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const dataSource = new DataSource(migrationDataSourceOptions(databaseUrl));
  await dataSource.initialize();
  const lock = dataSource.createQueryRunner();
  try {
    await lock.connect();
    await lock.query('SELECT pg_advisory_lock(7277001)');
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await lock.release();
    await dataSource.destroy();
  }
}

async function main(): Promise<void> {
  const config = loadConfig();
  if (process.argv.includes('--create-database')) await createDatabaseIfMissing(config.databaseUrl);
  const applied = await runMigrations(config.databaseUrl);
  process.stdout.write(applied.length ? `Applied migrations: ${applied.join(', ')}\n` : 'No pending migrations\n');
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(
      error instanceof ConfigError ? `${error.message}\n` : `Migration failed: ${(error as Error).message}\n`,
    );
    process.exit(1);
  });
}
