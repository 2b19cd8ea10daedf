import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource, type EntityMetadata, type QueryRunner, getMetadataArgsStorage } from 'typeorm';
import { dataSourceOptions } from 'src/database/data-source-options';
import { ownDatabase } from './helpers/own-database';

type ColumnMetadata = EntityMetadata['columns'][number];
type Query = ReturnType<QueryRunner['getMemorySql']>['upQueries'][number];

/**
 * TypeORM reads a generated column's expression from its typeorm_metadata table, which our
 * hand-written migrations do not keep: record what PostgreSQL itself holds there.
 */
async function recordGeneratedExpressions(runner: QueryRunner): Promise<void> {
  await runner.query(
    `CREATE TABLE typeorm_metadata (type varchar NOT NULL, database varchar, schema varchar, "table" varchar, name varchar, value text)`,
  );
  await runner.query(
    `INSERT INTO typeorm_metadata (type, database, schema, "table", name, value)
     SELECT 'GENERATED_COLUMN', current_database(), table_schema, table_name, column_name, generation_expression
     FROM information_schema.columns WHERE is_generated = 'ALWAYS' AND table_schema = current_schema()`,
  );
}

/** The entity's generation expression as PostgreSQL prints it, so that it compares with the recorded one by meaning, not spelling. */
async function asPostgresPrintsIt(runner: QueryRunner, column: ColumnMetadata): Promise<string> {
  const table = runner.connection.driver.escape(column.entityMetadata.tablePath);
  const name = runner.connection.driver.escape(column.databaseName);
  await runner.query(`CREATE TEMP TABLE drift_probe (LIKE ${table})`);
  try {
    await runner.query(`ALTER TABLE drift_probe DROP COLUMN ${name}`);
    const type = runner.connection.driver.normalizeType(column);
    await runner.query(
      `ALTER TABLE drift_probe ADD COLUMN ${name} ${type} GENERATED ALWAYS AS (${column.asExpression}) STORED`,
    );
    const [row] = (await runner.query(
      `SELECT generation_expression FROM information_schema.columns
       WHERE table_schema = (SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()) AND table_name = 'drift_probe' AND column_name = $1`,
      [column.databaseName],
    )) as { generation_expression: string }[];
    return row.generation_expression;
  } finally {
    await runner.query('DROP TABLE drift_probe');
  }
}

function listed(queries: Query[]): string {
  return queries
    .map((q) => `  ${q.query.trim()};${q.parameters?.length ? ` -- parameters ${JSON.stringify(q.parameters)}` : ''}`)
    .join('\n');
}

/** Empty when there is no drift; else the SQL a generated migration would hold, both ways. */
function describeDrift({ upQueries, downQueries }: ReturnType<QueryRunner['getMemorySql']>): string {
  if (upQueries.length === 0) return '';
  return (
    `The entities (src/**/*.entity.ts) and migrations/ disagree. A migration generated from the entities would run:\n${listed(upQueries)}\n` +
    `and in its down(), back to what migrations/ build:\n${listed([...downQueries].reverse())}\n` +
    'Fix the entity, or add a migration (reviewed by hand) for the schema change.'
  );
}

type EntityClass = new (...args: never[]) => unknown;

/** Every entity of the service: every *.entity.ts file under src/ is loaded, so a new one is checked without being listed here. */
function allEntities(): EntityClass[] {
  const src = join(__dirname, '..', 'src');
  const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.entity.ts'));
  for (const file of files) jest.requireActual(join(src, file));
  const entities = getMetadataArgsStorage()
    .tables.map((table) => table.target)
    .filter((target): target is EntityClass => typeof target === 'function');
  expect(entities.length).toBeGreaterThanOrEqual(files.length);
  return entities;
}

/**
 * The migration-drift check: on a database built by migrations/ alone, generating a migration
 * from the entities (what `migration:generate` would write) must yield nothing.
 */
describe('migration drift', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>> | undefined;
  let dataSource: DataSource;

  beforeAll(async () => {
    database = await ownDatabase('drift');
    dataSource = new DataSource({ ...dataSourceOptions(database.url), entities: allEntities() });
    await dataSource.initialize();
    const runner = dataSource.createQueryRunner();
    try {
      await recordGeneratedExpressions(runner);
      for (const column of dataSource.entityMetadatas.flatMap((entity) => entity.columns)) {
        if (column.asExpression !== undefined) column.asExpression = await asPostgresPrintsIt(runner, column);
      }
    } finally {
      await runner.release();
    }
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await database?.drop();
  });

  it('generating a migration from the entities yields nothing', async () => {
    const drift = describeDrift(await dataSource.driver.createSchemaBuilder().log());
    // Thrown rather than compared with expect(), which would print the SQL escaped.
    if (drift) throw new Error(drift);
  });

  // TypeORM skips these entirely, even when missing: this holds at least their name and table.
  it('the indexes entities leave to migrations/ (synchronize: false) exist on their tables', async () => {
    const declared = dataSource.entityMetadatas.flatMap((entity) =>
      entity.indices.filter((index) => !index.synchronize).map((index) => `${entity.tableName}.${index.name}`),
    );
    const found = (await dataSource.query(
      `SELECT tablename || '.' || indexname AS name FROM pg_indexes WHERE schemaname = current_schema()`,
    )) as { name: string }[];
    const inDatabase = new Set(found.map((index) => index.name));
    expect(declared.filter((index) => !inDatabase.has(index))).toEqual([]);
  });
});
