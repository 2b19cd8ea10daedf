import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';

/**
 * The statements the service composes (scripts/sql-snapshots.ts, run from dist/) against their
 * snapshots in sql/: a change to a fragment fails here until `npm run sql:snapshots` writes the new
 * text (reviewed in the diff and committed). Each statement is also prepared on the run's migrated
 * database: every table, column and function it names exists.
 */
const ROOT = join(__dirname, '..');
const SQL_DIR = join(ROOT, 'sql');

describe('SQL snapshots (sql/)', () => {
  let composed: Record<string, string>;

  beforeAll(() => {
    const run = spawnSync(process.execPath, [join(ROOT, 'dist/scripts/sql-snapshots.js'), '--json'], {
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`scripts/sql-snapshots.ts failed: ${run.stderr}`);
    composed = JSON.parse(run.stdout) as Record<string, string>;
  });

  it('every composed statement matches its file in sql/, and every file is a statement still composed', () => {
    const files = readdirSync(SQL_DIR, { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.sql'))
      .map((file) => file.split('\\').join('/'))
      .sort();
    expect(files).toEqual(Object.keys(composed).sort());
    const changed = Object.entries(composed).filter(
      ([name, text]) => readFileSync(join(SQL_DIR, name), 'utf8') !== text,
    );
    if (changed.length > 0) {
      throw new Error(
        `composed SQL differs from sql/ for ${changed.map(([name]) => name).join(', ')}: run npm run sql:snapshots and review the diff`,
      );
    }
  });

  it('every statement prepares on the migrated schema', async () => {
    const client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    try {
      const failures: string[] = [];
      for (const [name, text] of Object.entries(composed)) {
        try {
          await client.query(`PREPARE snapshot_check AS ${text}`);
          await client.query('DEALLOCATE snapshot_check');
        } catch (error) {
          failures.push(`${name}: ${(error as Error).message}`);
        }
      }
      expect(failures).toEqual([]);
    } finally {
      await client.end();
    }
  });
});
