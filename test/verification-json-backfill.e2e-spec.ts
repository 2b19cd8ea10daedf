import { Pool } from 'pg';
import { runMigrations } from 'src/database/migration-runner';
import { VERIFICATION_COLUMNS, type Verification } from 'src/verifications/verification.entity';
import { verificationJson } from 'src/verifications/verification.mapper';
import { MIGRATIONS } from '../migrations';
import { cliWith } from './helpers/cli';
import { ownDatabase } from './helpers/own-database';

/**
 * An upgrade of a database that holds 100,000 verifications written before `response_json`: the
 * migrations add the column and write no row (they stand still: none runs the service's code), then
 * `npm run cli -- render-json`, the upgrade's last step, gives every row the mapper's text, in batches
 * that each commit on their own. On a database of its own, migrated to the release before the column.
 */

const ROWS = 100_000;
const FILL = MIGRATIONS.findIndex((migration) => migration.name === 'VerificationResponseJson1763820000000');

describe('the upgrade to response_json on 100,000 existing rows', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let db: Pool;
  beforeAll(async () => {
    database = await ownDatabase('json_fill', false);
    await runMigrations(database.url, MIGRATIONS.slice(0, FILL));
    db = new Pool({ connectionString: database.url, max: 2 });
  });
  afterAll(async () => {
    await db?.end();
    await database?.drop();
  });

  it('the migrations write no row; render-json fills every row with the mapper text, in batches of 1,000 that each commit', async () => {
    const [{ id: accountId }] = (
      await db.query<{ id: string }>(
        `INSERT INTO accounts (id, name, webhook_url, created_at, updated_at) VALUES (gen_random_uuid(), 'fill', NULL, now(), now()) RETURNING id`,
      )
    ).rows;
    // Rows as varied as the mapper's branches: every status, applicant null or partial, document,
    // rejection reasons, metadata with integer-like and escaped keys, redacted rows.
    await db.query(
      `INSERT INTO verifications (id, account_id, external_user_id, status, version, created_at, updated_at,
         submitted_at, decided_at, applicant, document, rejection_reasons, metadata, redacted_at)
       SELECT gen_random_uuid(), $1, 'user "' || n || E'"\\u00e9', (ARRAY['pending','processing','approved','rejected'])[n % 4 + 1],
              n % 7 + 1, now() - n * interval '1 second', now() - n * interval '1 second' + interval '5 ms',
              CASE WHEN n % 4 > 0 THEN now() - n * interval '1 second' END,
              CASE WHEN n % 4 > 1 THEN now() - n * interval '1 second' END,
              CASE n % 3 WHEN 0 THEN NULL WHEN 1 THEN jsonb_build_object('first_name', 'Ada ' || n, 'email', 'a' || n || '@example.com')
                   ELSE '{"first_name":"Zoë","last_name":"O''Brien","date_of_birth":"1990-01-31","email":null}'::jsonb END,
              CASE WHEN n % 5 = 0 THEN '{"type":"passport","country":"GB"}'::jsonb END,
              CASE WHEN n % 4 = 3 THEN ARRAY['document_expired','other'] ELSE '{}' END,
              CASE WHEN n % 2 = 0 THEN jsonb_build_object('10', 'x', 'b', 'y' || n, 'a', E'\\\\', '2', '/') ELSE '{}' END,
              CASE WHEN n % 11 = 0 THEN now() END
         FROM generate_series(1, ${ROWS}) AS n`,
      [accountId],
    );
    const commits = async () =>
      Number(
        (
          await db.query<{ commits: string }>(
            `SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()`,
          )
        ).rows[0].commits,
      );
    const missing = async () =>
      (
        await db.query<{ missing: number }>(
          `SELECT count(*)::int AS missing FROM verifications WHERE response_json IS NULL`,
        )
      ).rows[0].missing;
    let started = performance.now();
    await runMigrations(database.url, MIGRATIONS);
    process.stdout.write(
      `response_json migrations on ${ROWS} rows: ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
    );
    expect(await missing()).toBe(ROWS);

    const commitsBefore = await commits();
    started = performance.now();
    const run = await cliWith({ DATABASE_URL: database.url }, 'render-json');
    process.stdout.write(`render-json on ${ROWS} rows: ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    expect(run).toMatchObject({ code: 0, stdout: expect.stringContaining(`stored JSON of ${ROWS} verification(s)`) });
    // pg_stat_database is reported when a backend goes idle; give the collector a moment.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await commits()) - commitsBefore).toBeGreaterThanOrEqual(ROWS / 1_000);

    let checked = 0;
    for (let last = '00000000-0000-0000-0000-000000000000'; ;) {
      const { rows } = await db.query<Verification & { response_json: string | null }>(
        `SELECT ${VERIFICATION_COLUMNS}, response_json FROM verifications WHERE id > $1 ORDER BY id LIMIT 10000`,
        [last],
      );
      if (rows.length === 0) break;
      for (const { response_json: stored, ...row } of rows) {
        if (stored !== verificationJson(row))
          expect({ id: row.id, stored }).toEqual({ id: row.id, stored: verificationJson(row) });
      }
      checked += rows.length;
      last = rows[rows.length - 1].id;
    }
    expect(checked).toBe(ROWS);
    expect(await missing()).toBe(0);
  }, 240_000); // 100,000 rows through the CLI: 12 s on a quiet machine, 36 s on a loaded one
});
