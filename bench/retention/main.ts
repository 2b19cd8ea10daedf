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
import { REDACT_BATCH } from 'src/retention/retention.service';
import { benchDatabaseUrlFrom, cleanRedisPrefixes, dropBenchDatabase, recreateBenchDatabase } from '../harness/db';
import { FlagError, parseFlags } from '../harness/flags';
import { pacedLoad } from '../harness/loads';
import { cpuSeconds, postgresCpuSeconds, runBench, startService } from '../harness/processes';
import { fmt, footer, log, table, verdict } from '../harness/report';
import { REDIS_URL, benchSecret, serviceEnv } from '../harness/service-env';
import { Tally } from '../harness/slices';
import { checkErasure } from './checks';
import { PausableWorker } from './pausable-worker';
import { seed } from './seed';
import { FLOOR_SELECTS_FROM_DAYS, PII_RETENTION_DAYS, connectFloor } from './floor';

const QUEUE_PREFIX = 'kyc_retbench';
type Kind = 'none' | 'pass' | 'floor';

function parseOptions(argv: string[]) {
  const integers = { verifications: 100_000, accounts: 100, recent: 100, rate: 200, slice: 5, warmup: 5 };
  const values = parseFlags(argv, { 'keep-database': { type: 'boolean' } }, integers);
  if (values.recent < 20) throw new FlagError('--recent needs at least 20 (one full first page per account)');
  return values;
}

/** Aged, not yet redacted rows of a pool. */
const remaining = (minDays: number, maxDays: number): string =>
  `SELECT count(*)::int AS n FROM verifications WHERE redacted_at IS NULL
     AND coalesce(decided_at, updated_at) < now() - make_interval(days => ${minDays})
     AND coalesce(decided_at, updated_at) >= now() - make_interval(days => ${maxDays})`;

runBench('bench:retention', parseOptions, async (options, lab) => {
  const databaseUrl = benchDatabaseUrlFrom('BENCH_RETENTION_DATABASE_URL', 'kyc_retention_bench');
  await recreateBenchDatabase(databaseUrl);
  if (!options['keep-database']) lab.defer(() => dropBenchDatabase(databaseUrl));
  const seconds = await seed(databaseUrl, options.accounts, options.verifications, options.recent, log);
  log(`seeded in ${fmt(seconds, 1)} s`);
  await cleanRedisPrefixes(REDIS_URL, [QUEUE_PREFIX]);
  lab.defer(() => cleanRedisPrefixes(REDIS_URL, [QUEUE_PREFIX]));
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
  const [serviceSql, floorSql] = [
    remaining(PII_RETENTION_DAYS, 36_500),
    remaining(FLOOR_SELECTS_FROM_DAYS, PII_RETENTION_DAYS),
  ];
  const [serviceAged, floorAged] = [await count(serviceSql), await count(floorSql)];
  const api = await lab.start(startService('api', { ...env, APP_ROLE: 'api' }));
  // info: the pass logs one line when it ends, which is how the bench sees its pool empty.
  const workerEnv = {
    ...env,
    APP_ROLE: 'worker',
    LOG_LEVEL: 'info',
    PII_RETENTION_DAYS: String(PII_RETENTION_DAYS),
    RETENTION_INTERVAL_MS: '100',
  };
  const workerProcess = await lab.start(
    startService('worker', workerEnv, { nodeArgs: ['--require', join(__dirname, 'pass-gate.js')], ipc: true }),
  );
  const worker = new PausableWorker(workerProcess);
  const requests = Array.from({ length: options.accounts }, (_, i) => ({
    path: '/api/v1/public/kyc/verifications?limit=20',
    secret: benchSecret(i),
  }));
  const list = pacedLoad(api.url, requests, options.rate);
  const passDone = async (): Promise<boolean> =>
    /retention: redacted \d+ verification/.test(workerProcess.output.join('')) &&
    (await redis.llen(`${QUEUE_PREFIX}:webhook-deliveries:wait`)) +
      (await redis.llen(`${QUEUE_PREFIX}:webhook-deliveries:active`)) ===
      0;
  log(`warm-up: ${options.warmup} s of the list with the pass running, then as long with the floor (not counted)`);
  await list(options.warmup, new Tally());
  await worker.pause();
  const warmUntil = performance.now() + options.warmup * 1000;
  while (performance.now() < warmUntil && (await floor.batch(REDACT_BATCH)) === REDACT_BATCH);
  worker.takeRunningSeconds();
  const [serviceTotal, floorStart] = [await count(serviceSql), await count(floorSql)];
  let floorLeft = floorStart;

  const tallies = { none: new Tally(api.child.pid), pass: new Tally(api.child.pid), floor: new Tally(api.child.pid) };
  const redacted = { pass: { rows: 0, seconds: 0, cpu: 0 }, floor: { rows: 0, seconds: 0, cpu: 0 } };
  // Worker + PostgreSQL CPU and wall time per kind of slice: the list alone's rate is subtracted.
  const used = { none: [0, 0], pass: [0, 0], floor: [0, 0] };
  /** The list for one slice, counted into `kind`, while `work` runs beside it. */
  const slice = async (kind: Kind, work: () => Promise<void>): Promise<void> => {
    await Promise.all([list(options.slice, tallies[kind]), work()]);
  };
  let done = false;
  for (let round = 0; !done; round++) {
    const kinds: Kind[] = ['pass', 'floor', 'none'];
    for (const kind of [...kinds.slice(round % 3), ...kinds.slice(0, round % 3)]) {
      const [before, rowsBefore] = [
        cpuSeconds(workerProcess.child.pid) + postgresCpuSeconds(),
        kind === 'pass' ? await count(serviceSql) : floorLeft,
      ];
      if (kind === 'pass' && !done) {
        await slice('pass', async () => {
          worker.resume();
          const deadline = performance.now() + options.slice * 1000;
          while (performance.now() < deadline && !(done = await passDone()))
            await new Promise((r) => setTimeout(r, 10));
        });
        if (!done) await worker.pause();
        redacted.pass.seconds += worker.takeRunningSeconds();
        redacted.pass.rows += rowsBefore - (await count(serviceSql));
      } else if (kind === 'floor' && floorLeft > 0) {
        await slice('floor', async () => {
          const t0 = performance.now();
          const deadline = t0 + options.slice * 1000;
          for (let n = REDACT_BATCH; n === REDACT_BATCH && performance.now() < deadline; floorLeft -= n)
            n = await floor.batch(REDACT_BATCH);
          redacted.floor.seconds += (performance.now() - t0) / 1000;
        });
        redacted.floor.rows += rowsBefore - floorLeft;
      } else if (kind === 'none') await slice('none', () => Promise.resolve());
      else continue;
      used[kind] = [
        (used[kind][0] ?? 0) + cpuSeconds(workerProcess.child.pid) + postgresCpuSeconds() - before,
        (used[kind][1] ?? 0) + options.slice,
      ];
    }
    log(
      `round ${round + 1}: pass ${redacted.pass.rows} of ${serviceTotal}, floor ${redacted.floor.rows} of ${floorStart}; list p99 so far none / pass / floor ${(['none', 'pass', 'floor'] as const).map((k) => tallies[k].measured().p99).join(' / ')} ms`,
    );
    if (round >= 1 && redacted.pass.rows === 0) throw new Error('the pass makes no progress');
  }
  const problems = await checkErasure(db, serviceAged, floorAged - floorLeft);
  const m = { none: tallies.none.measured(), pass: tallies.pass.measured(), floor: tallies.floor.measured() };
  const rate = (k: 'pass' | 'floor'): number => redacted[k].rows / redacted[k].seconds;
  const [noneCpu = 0, noneSeconds = 1] = used.none;
  for (const k of ['pass', 'floor'] as const)
    redacted[k].cpu = (used[k][0] ?? 0) - (noneCpu / noneSeconds) * (used[k][1] ?? 0);
  log();
  log(
    `${options.accounts} accounts; ${fmt(serviceTotal)} aged verifications for the pass, ${fmt(floorStart)} for the floor, 3 events each; the list at ${options.rate} first pages/s, open loop; slices of ${options.slice} s; REDACT_BATCH=${REDACT_BATCH}.`,
  );
  log(
    table(
      ['list first page, paced', 'requests', 'p50 ms', 'p99 ms', 'p99 ÷ none', 'api CPU ms/request'],
      (['none', 'pass', 'floor'] as const).map((k) => [
        k,
        fmt(m[k].requests),
        fmt(m[k].p50),
        fmt(m[k].p99),
        fmt(m[k].p99 / m.none.p99, 2),
        fmt(m[k].cpuMs, 3),
      ]),
    ),
  );
  log();
  log(
    table(
      [
        'redaction, under the list load',
        'verifications',
        'seconds running',
        'verifications/s',
        'CPU µs/verification beyond the list alone (worker + PostgreSQL)',
      ],
      (['pass', 'floor'] as const).map((k) => [
        k,
        fmt(redacted[k].rows),
        fmt(redacted[k].seconds, 1),
        fmt(rate(k)),
        fmt((redacted[k].cpu / redacted[k].rows) * 1e6),
      ]),
    ),
  );
  log();
  const target = `list p99 while the pass runs within 1.3 x the list alone (${m.pass.p99} vs ${m.none.p99} ms)`;
  log(verdict(m.pass.p99 <= 1.3 * m.none.p99, target));
  log(
    `info  the pass redacts at ${fmt(rate('pass') / rate('floor'), 2)} x the floor's rate; list p99 while the floor redacts: ${fmt(m.floor.p99 / m.none.p99, 2)} x the list alone`,
  );
  for (const problem of problems) log(`WARNING: ${problem}`);
  await footer(databaseUrl, m.none.failures + m.pass.failures + m.floor.failures);
});
