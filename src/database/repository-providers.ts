import type { Provider } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PgPool } from 'src/database/pg-pool';

type RepositoryClass = new (dataSource: DataSource, pool: PgPool) => unknown;

/**
 * Providers for repositories, which are plain classes built from the data source and the raw pool:
 * no Nest import, so a unit spec loads a repository's SQL fragments without the framework. The
 * module that lists them imports DatabaseModule.
 */
export function repositoryProviders(...repositories: RepositoryClass[]): Provider[] {
  return repositories.map((repository) => ({
    provide: repository,
    inject: [DataSource, PgPool],
    useFactory: (dataSource: DataSource, pool: PgPool) => new repository(dataSource, pool),
  }));
}
