import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { testDatabaseServerUrl } from '../../scripts/test-servers';
import { MIGRATIONS } from '../../migrations';
import { testRunEnv } from './test-env';

// Runs outside Jest's module mapper: its own imports are relative, as are the migrations' (they import
// nothing of src/).
export default async function globalSetup(): Promise<void> {
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const env = testRunEnv(runId);
  const url = new URL(env.DATABASE_URL);
  const dbName = url.pathname.slice(1);
  if (!/test/.test(dbName)) throw new Error(`Refusing to use database ${dbName}: its name does not say test`);
  Object.assign(process.env, env, { KYC_TEST_RUN_ID: runId });
  const admin = new Client({ connectionString: testDatabaseServerUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  await admin.end();
  const dataSource = new DataSource({
    type: 'postgres',
    url: env.DATABASE_URL,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
  });
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
}
