import { createDatabaseIfMissing, runMigrations } from 'src/database/migrate';
import { withMaintenanceDb } from '../common/bench-db';
import { isSeeded, seed } from './seed';

/**
 * Makes sure the bench database exists, is migrated and holds the seeded data set. A database that
 * is missing, incomplete, of an older seed version, or `force`d is dropped and built again from
 * the migrations, so the measured schema is always exactly the migrations' schema.
 */
export async function prepareBenchDatabase(
  databaseUrl: string,
  force: boolean,
  log: (line: string) => void,
): Promise<void> {
  const exists = await withMaintenanceDb(databaseUrl, async (client, name) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    return found.rowCount === 1;
  });
  if (exists && !force && (await isSeeded(databaseUrl))) {
    const applied = await runMigrations(databaseUrl);
    log(
      `bench database already seeded${applied.length ? `; applied new migrations ${applied.join(', ')}` : ''} (--reseed to rebuild)`,
    );
    return;
  }
  if (exists) {
    await withMaintenanceDb(databaseUrl, (client, name) =>
      client.query(`DROP DATABASE "${name.replace(/"/g, '""')}" WITH (FORCE)`),
    );
  }
  await createDatabaseIfMissing(databaseUrl);
  await runMigrations(databaseUrl);
  const seconds = await seed(databaseUrl, log);
  log(`seeded in ${seconds.toFixed(1)} s`);
}
