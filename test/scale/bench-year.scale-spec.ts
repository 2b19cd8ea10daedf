import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { LAST_OF_PREVIOUS_RELEASE, MIGRATIONS } from '../../migrations';
import { testDatabaseUrl, testRedisUrl } from '../../scripts/test-servers';

/**
 * `npm run bench:year` at a tiny scale (20,000 verifications beside 4,000, slices of 2 s), so the
 * benchmark itself keeps working as features land: it must seed both databases, measure every phase
 * on both and print each table whole. Its PASS/FAIL lines are not asserted: at this size and with
 * two-second slices they are noise; the figures that count are the full-size ones in
 * docs/performance.md.
 */
const ROOT = join(__dirname, '..', '..');
const FLAGS =
  '--verifications 20000 --small 4000 --accounts 100 --rate 20 --slices 1 --slice 2 --warmup 1 --idle 10 --rounds 1 --seconds 2 --backlog 2000 --pass-seconds 6';
const ROUTES = 14;

/** The table under the line that starts with `title`: its rows' cells (header and rule left out). */
function tableAfter(output: string, title: string): string[][] {
  const lines = output.split('\n');
  const start = lines.findIndex((line) => line.startsWith(title));
  if (start < 0) return [];
  const rows: string[][] = [];
  for (const line of lines.slice(start + 3)) {
    if (!line.startsWith('| ')) break;
    rows.push(line.slice(2, -2).split(' | '));
  }
  return rows;
}

const number = (cell: string | undefined): number => Number((cell ?? '').replace(/,/g, ''));

describe('npm run bench:year at a tiny scale', () => {
  let bench: ChildProcess | undefined;
  let output = '';
  let exitCode: number | null = null;

  beforeAll(async () => {
    execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'bench/tsconfig.json'], { cwd: ROOT });
    const run = `${process.pid}_${Date.now().toString(36)}`;
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_PATH: 'dist',
      REDIS_URL: testRedisUrl(),
      BENCH_YEAR_BIG_DATABASE_URL: testDatabaseUrl(`kyc_year_big_bench_${run}`),
      BENCH_YEAR_SMALL_DATABASE_URL: testDatabaseUrl(`kyc_year_small_bench_${run}`),
    };
    // Its own process group: a bench cut short takes the services it started with it.
    bench = spawn(process.execPath, ['dist-bench/bench/year/main.js', ...FLAGS.split(' ')], {
      cwd: ROOT,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [bench.stdout, bench.stderr]) stream?.on('data', (chunk: Buffer) => (output += String(chunk)));
    exitCode = await new Promise((resolve) => bench?.once('exit', resolve));
    process.stdout.write(output);
  }, 900_000);

  afterAll(() => {
    if (bench?.pid !== undefined && exitCode === null) process.kill(-bench.pid, 'SIGKILL');
  });

  it('seeds both databases and ends cleanly, every webhook arrived', () => {
    expect(output).toMatch(/big: seeded 20000 verifications, 100 small accounts in/);
    expect(output).toMatch(/small: seeded 4000 verifications, 20 small accounts in/);
    // Every webhook of every phase arrived (a request failing under the passes' load is the figures' concern, not this test's).
    expect(output.match(/^WARNING: .*webhooks arrived.*$/gm) ?? []).toEqual([]);
    expect(exitCode).toBe(0);
  });

  it("applies every migration since 1.0.0 to the seeded data, with the probes' waits", () => {
    const since = MIGRATIONS.slice(MIGRATIONS.findIndex((m) => m.name === LAST_OF_PREVIOUS_RELEASE) + 1);
    const rows = tableAfter(output, "This release's migrations applied one at a time");
    expect(rows.map((row) => row[0])).toEqual([
      ...since.map((m) => m.name),
      "render-json (the stored JSON, the CLI's batches of 1000)",
    ]);
    for (const [, seconds, wait] of rows) expect([number(seconds) >= 0, number(wait) > 0]).toEqual([true, true]);
  });

  it('measures every public route on both databases, all answered 2xx', () => {
    const rows = tableAfter(output, 'Public routes as the big account asks them');
    expect(rows).toHaveLength(ROUTES);
    for (const [route, , big, small, ratio, failed] of rows) {
      expect({ route, big: number(big) > 0, small: number(small) > 0, ratio: number(ratio) > 0 }).toEqual({
        route,
        big: true,
        small: true,
        ratio: true,
      });
      expect({ route, failed }).toEqual({ route, failed: '0' });
    }
  });

  it('measures idle cost, status changes and a drained backlog on both', () => {
    const idle = tableAfter(output, 'Idle: both services up');
    expect(idle.map((row) => row[0])).toEqual(['PostgreSQL statement time, ms per minute', 'transactions per minute']);
    for (const [, big, small] of idle) expect([number(big) > 0, number(small) > 0]).toEqual([true, true]);
    const changes = tableAfter(output, 'Status changes of');
    expect(changes.map((row) => row[0])).toEqual([
      'status changes/s',
      'webhooks delivered/s, to the last arrival',
      'webhooks ÷ changes',
    ]);
    expect(changes[2]?.slice(1, 3)).toEqual(['1.000', '1.000']);
    const drained = tableAfter(output, 'A backlog of 2,000 pending events')[0] ?? [];
    expect([number(drained[1]) > 0, number(drained[2]) > 0]).toEqual([true, true]);
  });

  it("measures another client's list and fresh changes on the year while a backlog drains and without, beside the bench's own loop", () => {
    const rows = tableAfter(output, 'On the year, slices of 2 s with a backlog of');
    expect(rows.map((row) => row[0])).toEqual([
      "another client's list p99 ms",
      'fresh commit→arrival p99 ms',
      "the bench's own event-loop delay, worst slice's p99 ms",
      "the bench's own event-loop delay max ms",
    ]);
    for (const [label, draining, quiet] of rows) {
      expect({ label, draining: number(draining) > 0, quiet: number(quiet) > 0 }).toEqual({
        label,
        draining: true,
        quiet: true,
      });
    }
  });

  it('runs both retention passes with another client measured during and without', () => {
    const rows = tableAfter(output, 'The first retention passes on the year');
    expect(rows.map((row) => row[0])).toEqual(['PII_RETENTION_DAYS=180', 'WEBHOOK_EVENT_RETENTION_DAYS=90']);
    for (const [, done, , during, without, , fresh] of rows) {
      expect(number(done?.split(' of ')[0]) > 0).toBe(true);
      expect([during, without, fresh].map((cell) => number(cell) > 0)).toEqual([true, true, true]);
    }
    expect(output.match(/^(PASS|FAIL) {2}/gm)).toHaveLength(12);
  });
});
