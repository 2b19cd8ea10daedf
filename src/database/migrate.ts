import 'reflect-metadata';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { createDatabaseIfMissing, runMigrations } from 'src/database/migration-runner';

/** `npm run migration:run`: applies pending migrations to DATABASE_URL (`--create-database` creates it first). */
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
