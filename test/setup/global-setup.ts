import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { testDatabaseServerUrl } from '../../scripts/test-servers';
import { MIGRATIONS } from '../../migrations';
import { testRunEnv } from './test-env';
import { workerDatabaseUrl } from './worker-names';

// Runs outside Jest's module mapper: its own imports are relative, as are the migrations' (they import
// nothing of src/).
export default async function globalSetup(globalConfig: { maxWorkers: number }): Promise<void> {
  // Worker queue prefixes (test/setup/worker-env.ts) must not start with one another's.
  if (globalConfig.maxWorkers > 9) throw new Error('At most 9 Jest workers: worker queue prefixes must not nest');
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const env = testRunEnv(runId);
  const url = new URL(env.DATABASE_URL);
  const dbName = url.pathname.slice(1);
  if (!/test/.test(dbName)) throw new Error(`Refusing to use database ${dbName}: its name does not say test`);
  Object.assign(process.env, env, {
    KYC_TEST_RUN_ID: runId,
    KYC_TEST_RUN_DATABASE_URL: env.DATABASE_URL,
    KYC_TEST_RUN_QUEUE_PREFIX: env.QUEUE_PREFIX,
  });
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
  // A parallel run's workers 2..N each get a copy of the migrated database (test/setup/worker-env.ts).
  const server = new Client({ connectionString: testDatabaseServerUrl() });
  await server.connect();
  try {
    for (let worker = 2; worker <= globalConfig.maxWorkers; worker += 1) {
      const name = new URL(workerDatabaseUrl(env.DATABASE_URL, worker)).pathname.slice(1);
      await server.query(`CREATE DATABASE "${name}" TEMPLATE "${dbName}"`);
    }
  } finally {
    await server.end();
  }
}
