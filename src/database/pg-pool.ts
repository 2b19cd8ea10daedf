import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Pool, type PoolClient, type QueryResultRow } from 'pg';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { APP_QUERY_TIMEOUT_MS, poolSettings } from 'src/database/data-source-options';

const logger = new Logger('Database');

/**
 * A raw `pg` pool on DATABASE_URL, beside TypeORM's, for the statements TypeORM's query API cannot
 * send: named prepared statements, parsed and planned once per connection (the delivery worker's
 * batched load and record). It opens connections only when used, so a process that never asks
 * holds none.
 */
@Injectable()
export class PgPool implements OnApplicationShutdown {
  private readonly pool: Pool;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.pool = new Pool({
      connectionString: config.databaseUrl,
      ...poolSettings(APP_QUERY_TIMEOUT_MS, config.databaseUrl),
      max: 10,
    });
    // An idle connection dropped by the server: the pool replaces it; only the next query can fail.
    this.pool.on('error', (error) => logger.warn(`idle PostgreSQL connection lost: ${error.message}`));
  }

  /** Runs `text` as the prepared statement `name` (the same name must always carry the same text). */
  async prepared<R extends QueryResultRow>(name: string, text: string, values: unknown[]): Promise<R[]> {
    return (await this.pool.query<R>({ name, text, values })).rows;
  }

  /** A connection of the pool, for a caller that must know which session ran its statement (commit-settler.ts). */
  connect(): Promise<PoolClient> {
    return this.pool.connect();
  }

  async query<R extends QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    return (await this.pool.query<R>(text, values)).rows;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}
