import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { ClientBase, PoolClient } from 'pg';
import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { ApiError } from 'src/common/api-error';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { type CommitProbe, isOutcomeUnknown, settleCommit } from 'src/database/in-doubt';
import { PgPool } from 'src/database/pg-pool';
import { backendOf } from 'src/database/primary-only';

/** TypeORM's query runner for pg, as far as this file needs it: the client, and a release that drops it. */
interface PgQueryRunner extends QueryRunner {
  databaseConnection?: ClientBase;
  releasePostgresConnection?(error?: Error): Promise<void>;
}

/**
 * Writes whose answer is never a lie. When the answer of a COMMIT (or of a one-statement write) is
 * lost — the connection cut during a failover, the session ended, the service's own query time-out
 * while a slow WAL flush commits — the request does not answer 503 blindly: the outcome is found on
 * a fresh connection to the primary (in-doubt.ts) and the request answers as it was: the result if
 * it committed, 503 if not, and 503 `commit` `unknown` only if no primary answered in time.
 */
@Injectable()
export class CommitSettler {
  private readonly logger = new Logger('Database');
  private readonly budgetMs: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    readonly pool: PgPool,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    // Half the request's deadline: a failover takes seconds, and the answer must still reach the client.
    this.budgetMs = Math.floor(config.httpRequestTimeoutMs / 2);
  }

  /**
   * `work` in a transaction on the primary. `committed` names, from work's result, what to look for
   * if the commit's answer is lost (null when the work wrote nothing).
   */
  async transaction<T>(
    work: (manager: EntityManager) => Promise<T>,
    committed: (result: T) => CommitProbe | null,
  ): Promise<T> {
    const runner: PgQueryRunner = this.dataSource.createQueryRunner('master');
    let result: T;
    try {
      await runner.startTransaction();
      result = await work(runner.manager);
    } catch (error) {
      await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
      throw error;
    }
    try {
      await runner.commitTransaction();
    } catch (error) {
      const probe = committed(result);
      const client = runner.databaseConnection;
      if (!isOutcomeUnknown(error) || probe === null || !client || !runner.releasePostgresConnection) {
        await runner.release();
        throw error;
      }
      const backend = backendOf(client);
      // With the error, the pool drops the connection: no other request gets a session in doubt.
      await runner.releasePostgresConnection(error as Error);
      return this.settle(error, backend, probe, result);
    }
    await runner.release();
    return result;
  }

  /** One autocommit write on the raw pool; `ifCommitted` is its result when its answer was lost but it committed. */
  async statement<R>(run: (client: PoolClient) => Promise<R>, probe: CommitProbe, ifCommitted: R): Promise<R> {
    const client = await this.pool.connect();
    // A checked-out client's connection errors are the query's to report (pool.query does the same).
    const ignore = (): void => undefined;
    client.on('error', ignore);
    let result: R;
    try {
      result = await run(client);
    } catch (error) {
      client.off('error', ignore);
      if (!isOutcomeUnknown(error)) {
        client.release();
        throw error;
      }
      const backend = backendOf(client);
      client.release(error as Error);
      return this.settle(error, backend, probe, ifCommitted);
    }
    client.off('error', ignore);
    client.release();
    return result;
  }

  private async settle<T>(
    error: unknown,
    backend: ReturnType<typeof backendOf>,
    probe: CommitProbe,
    result: T,
  ): Promise<T> {
    const outcome = await settleCommit(this.config.databaseUrl, backend, probe, this.budgetMs);
    this.logger.warn(`a write's commit answer was lost (${(error as Error).message}); on the primary: ${outcome}`);
    if (outcome === 'committed') return result;
    if (outcome === 'not_committed') throw error;
    throw ApiError.commitUnknown();
  }
}
