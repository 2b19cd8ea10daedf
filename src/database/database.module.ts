import { Inject, Injectable, Logger, MiddlewareConsumer, Module, NestMiddleware, NestModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { NextFunction, Request, Response } from 'express';
import { DataSource, DataSourceOptions } from 'typeorm';
import { ApiError } from 'src/common/api-error';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { APP_QUERY_TIMEOUT_MS, dataSourceOptions } from 'src/database/data-source-options';
import { useCorrectJsonParsers } from 'src/database/pg-json';
import { CommitSettler } from 'src/database/commit-settler';
import { PgPool } from 'src/database/pg-pool';

const RECONNECT_INTERVAL_MS = 2_000;
const logger = new Logger('Database');

/**
 * The process starts even when PostgreSQL is down (API routes answer 503 meanwhile) and keeps
 * trying to connect in the background, so an outage at deploy time heals without a restart.
 */
async function connectOrKeepTrying(options: DataSourceOptions): Promise<DataSource> {
  const dataSource = new DataSource(options);
  try {
    await dataSource.initialize();
  } catch (error) {
    logger.warn(
      `PostgreSQL is unreachable at start (${(error as Error).message}); retrying every ${RECONNECT_INTERVAL_MS} ms`,
    );
    const retry = (): void => {
      dataSource.initialize().then(
        () => logger.log('PostgreSQL connection established'),
        () => setTimeout(retry, RECONNECT_INTERVAL_MS).unref(),
      );
    };
    setTimeout(retry, RECONNECT_INTERVAL_MS).unref();
  }
  return dataSource;
}

// json and jsonb columns are parsed correctly on every Node.js line (pg-json.ts), before any query.
useCorrectJsonParsers();

/** Until the first connection succeeds, API routes answer 503 instead of failing deep inside TypeORM. */
@Injectable()
class DatabaseReadyMiddleware implements NestMiddleware {
  constructor(@Inject(DataSource) private readonly dataSource: DataSource) {}

  use(_req: Request, _res: Response, next: NextFunction): void {
    if (this.dataSource.isInitialized) return next();
    next(ApiError.databaseUnavailable());
  }
}

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        ...dataSourceOptions(config.databaseUrl, config.databaseReadUrls, APP_QUERY_TIMEOUT_MS),
        autoLoadEntities: true,
        retryAttempts: 0,
        manualInitialization: true,
      }),
      dataSourceFactory: async (options) => connectOrKeepTrying(options as DataSourceOptions),
    }),
  ],
  providers: [DatabaseReadyMiddleware, PgPool, CommitSettler],
  exports: [PgPool, CommitSettler],
})
export class DatabaseModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(DatabaseReadyMiddleware).forRoutes('api/*path');
  }
}
