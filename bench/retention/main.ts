/**
 * npm run bench:retention — the retention pass (RetentionService in an APP_ROLE=worker process,
 * batches of REDACT_BATCH) redacting aged verifications while the list's first page is requested
 * from an APP_ROLE=api process open loop at a paced rate; beside a floor doing the same erasure as
 * one hand-written SQL statement per batch from a bare pg client (floor.ts), on a pool of rows of
 * its own. Slices of three kinds take turns, the order rotated each round: *pass* (the worker's
 * one long pass continues; pass-gate.ts holds it between slices at a moment it holds no
 * transaction), *floor* (the floor redacts) and *none* (the list alone). See docs/performance.md;
 * the options and their defaults are in parseOptions.
 */
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { DEFAULT_RETENTION_BUDGET_PERCENT } from 'src/config/app-config';
import { REDACT_BATCH } from 'src/retention/retention.service';
import { dropBenchDatabase, freshBench } from '../harness/db';
import { FlagError, parseFlags } from '../harness/flags';
import { pacedLoad } from '../harness/loads';
import { cpuSeconds, postgresCpuSeconds, runBench, startService } from '../harness/processes';
import { fmt, footer, log, table, verdict } from '../harness/report';
import { REDIS_URL, benchSecret, serviceEnv } from '../harness/service-env';
import { Tally } from '../harness/slices';
import { checkErasure } from './checks';
import { FLOOR_SELECTS_FROM_DAYS, PII_RETENTION_DAYS, connectFloor } from './floor';
import { gateOf } from './gate';
import { seed } from './seed';

const QUEUE_PREFIX = 'kyc_retbench';
const KINDS = ['pass', 'floor', 'none'] as const;
type Kind = (typeof KINDS)[number];

function parseOptions(argv: string[]) {
  const integers = {
    verifications: 100_000,
    accounts: 100,
    recent: 100,
    rate: 200,
    slice: 5,
    warmup: 5,
    budget: DEFAULT_RETENTION_BUDGET_PERCENT,
  };
  const values = parseFlags(argv, { 'keep-database': { type: 'boolean' } }, integers);
  if (values.recent < 20) throw new FlagError('--recent needs at least 20 (one full first page per account)');
  if (values.budget < 1 || values.budget > 100) throw new FlagError('--budget is RETENTION_BUDGET_PERCENT: 1 to 100');
  return values;
}

/** Aged, not yet redacted rows of a pool. */
const remaining = (minDays: number, maxDays: number): string =>
  `SELECT count(*)::int AS n FROM verifications WHERE redacted_at IS NULL
     AND coalesce(decided_at, updated_at) < now() - make_interval(days => ${minDays})
     AND coalesce(decided_at, updated_at) >= now() - make_interval(days => ${maxDays})`;

runBench('bench:retention', parseOptions, async (options, lab) => {
  const databaseUrl = await freshBench(lab, 'BENCH_RETENTION_DATABASE_URL', 'kyc_retention_bench', [QUEUE_PREFIX]);
  if (!options['keep-database']) lab.defer(() => dropBenchDatabase(databaseUrl));
  const seconds = await seed(databaseUrl, options.accounts, options.verifications, options.recent);
  log(`seeded in ${fmt(seconds, 1)} s`);
  const env = serviceEnv(databaseUrl, QUEUE_PREFIX);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  lab.defer(() => db.end());
  await db.query('SET max_parallel_workers_per_gather = 0');
  const count = async (sql: string): Promise<number> => (await db.query<{ n: number }>(sql)).rows[0]?.n ?? 0;
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  lab.defer(() => redis.disconnect());
  const floor = await connectFloor(databaseUrl);
  lab.defer(() => floor.close());
  const serviceSql = remaining(PII_RETENTION_DAYS, 36_500);
  const floorSql = remaining(FLOOR_SELECTS_FROM_DAYS, PII_RETENTION_DAYS);
  const [serviceAged, floorAged] = [await count(serviceSql), await count(floorSql)];
  const api = await lab.start(startService('api', { ...env, APP_ROLE: 'api' }));
  // info: the pass logs one line when it ends, which is how the bench sees its pool empty.
  const retention = {
    PII_RETENTION_DAYS: String(PII_RETENTION_DAYS),
    RETENTION_INTERVAL_MS: '100',
    RETENTION_BUDGET_PERCENT: String(options.budget),
  };
  const workerEnv = { ...env, APP_ROLE: 'worker', LOG_LEVEL: 'info', ...retention };
  const worker = await lab.start(
    startService('worker', workerEnv, { nodeArgs: ['--require', join(__dirname, 'pass-gate.js')], ipc: true }),
  );
  const gate = gateOf(worker);
  const path = '/api/v1/public/kyc/verifications?limit=20';
  const requests = Array.from({ length: options.accounts }, (_, i) => ({ path, secret: benchSecret(i) }));
  const list = pacedLoad(api.url, requests, options.rate);
  const queued = (state: string): Promise<number> => redis.llen(`${QUEUE_PREFIX}:webhook-deliveries:${state}`);
  const passDone = async (): Promise<boolean> =>
    /retention: redacted \d+ verification/.test(worker.output.join('')) &&
    (await queued('wait')) + (await queued('active')) === 0;
  log(`warm-up: ${options.warmup} s of the list with the pass running, then as long with the floor (not counted)`);
  await list(options.warmup, new Tally());
  await gate.pause();
  const warmUntil = performance.now() + options.warmup * 1000;
  while (performance.now() < warmUntil && (await floor.batch(REDACT_BATCH)) === REDACT_BATCH);
  const [serviceTotal, floorStart] = [await count(serviceSql), await count(floorSql)];
  let [floorLeft, done] = [floorStart, false];

  const tallies = { pass: new Tally(api.child.pid), floor: new Tally(api.child.pid), none: new Tally(api.child.pid) };
  // Per kind of slice: rows redacted, seconds redacting, worker + PostgreSQL CPU seconds, seconds of slice, WAL bytes.
  const work = { pass: [0, 0, 0, 0, 0], floor: [0, 0, 0, 0, 0], none: [0, 0, 0, 0, 0] };
  const walBytes = async (): Promise<number> =>
    (await db.query<{ b: number }>(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS b`)).rows[0]?.b ?? 0;
  /** Redacts until `deadline` (or the pool is empty); returns the rows the floor redacted. */
  const redact = async (kind: Kind, deadline: number): Promise<number> => {
    if (kind === 'pass') {
      gate.resume();
      while (performance.now() < deadline && !(done = await passDone())) await new Promise((r) => setTimeout(r, 10));
      if (!done) await gate.pause();
    }
    let rows = 0;
    for (let n = REDACT_BATCH; kind === 'floor' && n === REDACT_BATCH && performance.now() < deadline; rows += n)
      n = await floor.batch(REDACT_BATCH);
    floorLeft -= rows;
    return rows;
  };
  for (let round = 0; !done; round++) {
    for (const kind of [...KINDS.slice(round % 3), ...KINDS.slice(0, round % 3)]) {
      if ((kind === 'pass' && done) || (kind === 'floor' && floorLeft === 0)) continue;
      const pool = kind === 'pass' ? await count(serviceSql) : 0;
      const [cpu, wal] = [cpuSeconds(worker.child.pid) + postgresCpuSeconds(), await walBytes()];
      const t0 = performance.now();
      const running = redact(kind, t0 + options.slice * 1000).then((rows) => [rows, performance.now() - t0]);
      const [, [rows = 0, ms = 0]] = await Promise.all([list(options.slice, tallies[kind]), running]);
      const [r = 0, s = 0, c = 0, w = 0, b = 0] = work[kind];
      const used = cpuSeconds(worker.child.pid) + postgresCpuSeconds() - cpu;
      const written = (await walBytes()) - wal;
      const redacted = kind === 'pass' ? pool - (await count(serviceSql)) : rows;
      work[kind] = [r + redacted, s + (kind === 'none' ? 0 : ms / 1000), c + used, w + options.slice, b + written];
    }
    const p99s = KINDS.map((k) => fmt(tallies[k].measured().p99)).join(' / ');
    const line = `round ${round + 1}: pass ${work.pass[0]} of ${serviceTotal}, floor ${work.floor[0]} of ${floorStart}; list p99 so far pass / floor / none ${p99s} ms`;
    log(line);
    if (round >= 1 && work.pass[0] === 0) throw new Error('the pass makes no progress');
  }
  const problems = await checkErasure(db, serviceAged, floorAged - floorLeft);
  const m = { pass: tallies.pass.measured(), floor: tallies.floor.measured(), none: tallies.none.measured() };
  log();
  const setup = `${options.accounts} accounts; ${fmt(serviceTotal)} aged verifications for the pass, ${fmt(floorStart)} for the floor, 3 events each; the list at ${options.rate} first pages/s, open loop; slices of ${options.slice} s; REDACT_BATCH=${REDACT_BATCH}, RETENTION_BUDGET_PERCENT=${options.budget}.`;
  log(setup);
  const listRow = (k: Kind): string[] => [
    k,
    ...[m[k].requests, m[k].p50, m[k].p99].map((n) => fmt(n)),
    fmt(m[k].p99 / m.none.p99, 2),
    fmt(m[k].cpuMs, 3),
  ];
  const listHeader = ['list first page, paced', 'requests', 'p50 ms', 'p99 ms', 'p99 ÷ none', 'api CPU ms/request'];
  log(table(listHeader, (['none', 'pass', 'floor'] as const).map(listRow)));
  log();
  // Redacting: the worker's and PostgreSQL's CPU beyond what they use in as long with the list alone.
  const [, , noneCpu = 0, noneWall = 1] = work.none;
  const rate = (k: 'pass' | 'floor'): number => (work[k][0] ?? 0) / (work[k][1] ?? 0);
  const redactRow = (k: 'pass' | 'floor'): string[] => {
    const [rows = 0, seconds = 0, cpu = 0, wall = 0, wal = 0] = work[k];
    const cpuBeyond = ((cpu - (noneCpu / noneWall) * wall) / rows) * 1e6;
    return [k, fmt(rows), fmt(seconds, 1), fmt(rate(k)), fmt(cpuBeyond), fmt(wal / rows)];
  };
  const redactHeader = ['redaction, under the list load', 'verifications', 'seconds running', 'verifications/s'];
  const beyond = ['CPU µs/verification beyond the list alone (worker + PostgreSQL)', 'WAL bytes/verification'];
  log(table([...redactHeader, ...beyond], (['pass', 'floor'] as const).map(redactRow)));
  log();
  const target = `list p99 while the pass runs within 1.3 x the list alone (${fmt(m.pass.p99)} vs ${fmt(m.none.p99)} ms)`;
  log(verdict(m.pass.p99 <= 1.3 * m.none.p99, target));
  const info = `info  the pass redacts at ${fmt(rate('pass') / rate('floor'), 2)} x the floor's rate; list p99 while the floor redacts: ${fmt(m.floor.p99 / m.none.p99, 2)} x the list alone`;
  log(info);
  for (const problem of problems) log(`WARNING: ${problem}`);
  await footer(databaseUrl, m.none.failures + m.pass.failures + m.floor.failures);
});
