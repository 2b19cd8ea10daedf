/**
 * npm run bench:retention — the retention pass (RetentionService.run: VerificationRedactor
 * .redactExpired in batches of REDACT_BATCH, in an APP_ROLE=worker process) redacting aged
 * verifications in the background while a paced first-page list load runs against an APP_ROLE=api
 * process; beside a floor doing the same erasure as one hand-written SQL statement per batch from
 * a bare pg client, on a pool of its own of the same size and shape. See docs/performance.md.
 *
 * The list load runs without a break at a fixed rate, open loop. Around it, slices of three kinds
 * take turns, the order rotated each round: *pass* (the worker, paused between slices with
 * SIGSTOP at a moment it holds no transaction, is continued: its one long pass goes on), *floor*
 * (the floor redacts its pool for as long) and *none* (the list alone, the worker stopped). Each
 * list response counts into the kind of slice its request was sent in; the pauses fall between
 * slices and are not counted.
 *
 * Options: --verifications <n> (100000 aged verifications per pool: the service's and the floor's),
 * --accounts <n> (100), --recent <n> (100 recent verifications per account), --rate <n> (200 list
 * requests/s), --slice <s> (5), --warmup <s> (5), --keep-database, --out <file.json>,
 * --env KEY=VALUE (repeatable: extra environment for the worker, for experiments), --profile-worker <dir>
 * (the worker writes a V8 CPU profile there when it stops).
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import Redis from 'ioredis';
import { Client } from 'pg';
import { REDACT_BATCH } from 'src/verifications/retention.service';

/** The service's retention pass does not pause between batches; the floor's batches do the same. */
const REDACT_PAUSE_MS = 0;
import { cleanRedisPrefixes, describeMachine, recreateBenchDatabase } from '../common/bench-db';
import { FlagError, parseFlags, positiveInteger, readOptions } from '../common/flags';
import { BenchProcess, startProcess } from '../common/processes';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_INTERNAL_API_TOKEN,
  BENCH_SECRET_ENCRYPTION_KEY,
  benchSecret,
} from '../list/bench-env';
import { SERVICE_MAIN } from '../list/targets';
import { FloorRedactor } from './floor';
import { LatencyTally, ListRequest, PacedList } from './paced-list';
import { PausableWorker } from './pausable-worker';
import { benchDatabaseUrl, checkSeededBodies, dropBenchDatabase, seed } from './seed';
import { FLOOR_POOL, FLOOR_SELECTS_FROM_DAYS, PII_RETENTION_DAYS, SERVICE_POOL } from './windows';

const LIST_PATH = '/api/v1/public/kyc/verifications';
const QUEUE_PREFIX = 'kyc_retbench';
const RETENTION_INTERVAL_MS = 100;
/** The worker's gate (pass-gate.ts), preloaded with --require. */
const PASS_GATE = join(__dirname, 'pass-gate.js');

interface Options {
  verifications: number;
  accounts: number;
  recent: number;
  rate: number;
  slice: number;
  warmup: number;
  keepDatabase: boolean;
  out?: string;
  env: Record<string, string>;
  profileWorker?: string;
}

type Kind = 'none' | 'pass' | 'floor';
const KINDS: Kind[] = ['pass', 'floor', 'none'];

interface Redaction {
  rows: number;
  /** Seconds the redaction was running: the pass's own timing (its log line), the floor's batches. */
  seconds: number;
  slices: number;
}

interface SliceRecord {
  round: number;
  kind: Kind;
  seconds: number;
  requests: number;
  p50: number;
  p99: number;
  rows: number;
  load1: number;
  /** Whether an autovacuum worker was seen running in this database during the slice (sampled every 500 ms). */
  autovacuum: boolean;
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** The --env KEY=VALUE pairs (the value may hold "=" itself). */
function extraEnv(pairs: string[] = []): Record<string, string> {
  const bad = pairs.find((pair) => !/^[^=]+=/.test(pair));
  if (bad !== undefined) throw new FlagError(`--env needs KEY=VALUE, not "${bad}"`);
  return Object.fromEntries(pairs.map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
}

function parseOptions(argv: string[]): Options {
  const values = parseFlags(argv, {
    verifications: { type: 'string' },
    accounts: { type: 'string' },
    recent: { type: 'string' },
    rate: { type: 'string' },
    slice: { type: 'string' },
    warmup: { type: 'string' },
    'keep-database': { type: 'boolean' },
    out: { type: 'string' },
    env: { type: 'string', multiple: true },
    'profile-worker': { type: 'string' },
  });
  const recent = positiveInteger(values, 'recent', 100);
  if (recent < 20) throw new FlagError('--recent needs at least 20 (one full first page per account)');
  return {
    verifications: positiveInteger(values, 'verifications', 100_000),
    accounts: positiveInteger(values, 'accounts', 100),
    recent,
    rate: positiveInteger(values, 'rate', 200),
    slice: positiveInteger(values, 'slice', 5),
    warmup: positiveInteger(values, 'warmup', 5),
    keepDatabase: values['keep-database'] === true,
    out: values.out,
    env: extraEnv(values.env),
    profileWorker: values['profile-worker'],
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function startService(
  name: string,
  env: Record<string, string>,
  gated = false,
  nodeArgs: string[] = [],
): Promise<BenchProcess> {
  return startProcess(name, SERVICE_MAIN, env, {
    nodeArgs: gated ? [...nodeArgs, '--require', PASS_GATE] : nodeArgs,
    ipc: gated,
    ready: async (url) => (await fetch(`${url}/health/live`)).ok,
    stopGraceMs: 15_000,
  });
}

/** The pass's own account of itself: "retention: redacted N verification(s) … in X ms", one line per pass. */
function passLines(output: string[]): { rows: number; ms: number }[] {
  const passes: { rows: number; ms: number }[] = [];
  for (const match of output.join('').matchAll(/retention: redacted (\d+) verification\(s\).*? in (\d+) ms/g)) {
    passes.push({ rows: Number(match[1]), ms: Number(match[2]) });
  }
  return passes;
}

async function count(client: Client, sql: string, params: unknown[] = []): Promise<number> {
  const { rows } = await client.query<{ n: number }>(sql, params);
  return rows[0]?.n ?? 0;
}

/** Aged, not yet redacted rows of a pool. */
function remainingSql(minDays: number, maxDays: number): string {
  return `SELECT count(*)::int AS n FROM verifications WHERE redacted_at IS NULL
            AND coalesce(decided_at, updated_at) < now() - make_interval(days => ${minDays})
            AND coalesce(decided_at, updated_at) >= now() - make_interval(days => ${maxDays})`;
}
const SERVICE_REMAINING = remainingSql(PII_RETENTION_DAYS, 36_500);
const FLOOR_REMAINING = remainingSql(FLOOR_SELECTS_FROM_DAYS, PII_RETENTION_DAYS);

async function autovacuumRunning(monitor: Client): Promise<boolean> {
  const { rows } = await monitor.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database()`,
  );
  return (rows[0]?.n ?? 0) > 0;
}

/** The machine's CPU time so far, in seconds: busy (user, nice, system, irq, softirq) and stolen by the hypervisor. */
function machineCpu(): { busy: number; steal: number } {
  try {
    const [user, nice, system, , , irq, softirq, steal] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const sum = [user, nice, system, irq, softirq].reduce<number>((a, b) => a + (b ?? 0), 0);
    return { busy: sum / 100, steal: (steal ?? 0) / 100 };
  } catch {
    return { busy: NaN, steal: NaN };
  }
}

/** Process ids by command line (pgrep -f), for the shared servers whose CPU the summary shows. */
function pidsOf(pattern: RegExp): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (pattern.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' '))) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The PostgreSQL backends serving this database (the service's pools, the floor, autovacuum), but the asking one. */
async function backendPids(monitor: Client): Promise<number[]> {
  const { rows } = await monitor.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
  );
  return rows.map((row) => row.pid);
}

/** CPU seconds (user + system) a process has used so far, from /proc (NaN elsewhere). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Delivery jobs waiting or running. */
async function queueLength(redis: Redis): Promise<number> {
  const [waiting, active] = await Promise.all([
    redis.llen(`${QUEUE_PREFIX}:webhook-deliveries:wait`),
    redis.llen(`${QUEUE_PREFIX}:webhook-deliveries:active`),
  ]);
  return waiting + active;
}

/**
 * After the run: every aged row of both pools redacted (the floor's, as far as it got), each with
 * one verification.redacted event, no personal data and no response excerpt left in its events;
 * and the service's and the floor's rewritten payloads erase the same fields.
 */
async function checkErasure(client: Client, expectedService: number, floorRows: number): Promise<string[]> {
  const problems: string[] = [];
  // Fresh statistics after the rewrite of every aged row, so the checks below plan as hash joins.
  await client.query('ANALYZE verifications, webhook_events, webhook_attempts');
  const pool = `CASE WHEN coalesce(v.decided_at, v.updated_at) < now() - make_interval(days => ${PII_RETENTION_DAYS}) THEN 'service' ELSE 'floor' END`;
  const perPool = async (sql: string): Promise<Record<string, number>> => {
    const { rows } = await client.query<{ pool: string; n: number }>(sql);
    return Object.fromEntries(rows.map((row) => [row.pool, row.n]));
  };
  const redacted = await perPool(
    `SELECT ${pool} AS pool, count(*)::int AS n FROM verifications v WHERE v.redacted_at IS NOT NULL GROUP BY 1`,
  );
  const events = await perPool(
    `SELECT ${pool} AS pool, count(*)::int AS n FROM webhook_events e JOIN verifications v ON v.id = e.verification_id
      WHERE e.type = 'verification.redacted' GROUP BY 1`,
  );
  if ((redacted.service ?? 0) !== expectedService)
    problems.push(`service pool: ${redacted.service ?? 0} redacted, expected ${expectedService}`);
  if ((redacted.floor ?? 0) !== floorRows)
    problems.push(`floor pool: ${redacted.floor ?? 0} redacted, the floor counted ${floorRows}`);
  for (const name of ['service', 'floor']) {
    if ((events[name] ?? 0) !== (redacted[name] ?? 0))
      problems.push(
        `${name} pool: ${events[name] ?? 0} verification.redacted events for ${redacted[name] ?? 0} redacted`,
      );
  }
  const leftovers = await count(
    client,
    `SELECT count(*)::int AS n FROM webhook_events e JOIN verifications v ON v.id = e.verification_id
      WHERE v.redacted_at IS NOT NULL
        AND (e.body LIKE '%@example.com%' OR e.body LIKE '%"first_name"%'
             OR (e.type = 'verification.status_changed' AND e.redacted_at IS NULL))`,
  );
  if (leftovers > 0) problems.push(`${leftovers} events of redacted verifications still hold personal data`);
  const excerpts = await count(
    client,
    `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
       JOIN verifications v ON v.id = e.verification_id
      WHERE v.redacted_at IS NOT NULL AND a.response_body IS NOT NULL`,
  );
  if (excerpts > 0) problems.push(`${excerpts} attempts of redacted verifications still hold a response excerpt`);
  // One rewritten payload and one redacted event of each: the same fields, the same erased values.
  const sample = await client.query<{ pool: string; type: string; body: string }>(
    `SELECT DISTINCT ON (1, e.type) ${pool} AS pool, e.type, e.body
       FROM webhook_events e JOIN verifications v ON v.id = e.verification_id
      WHERE v.redacted_at IS NOT NULL ORDER BY 1, e.type, e.id`,
  );
  const shape = (body: string): string => {
    const payload = JSON.parse(body) as { data: Record<string, unknown> & { verification: Record<string, unknown> } };
    const v = payload.data.verification;
    const erased = ['external_user_id', 'applicant', 'document', 'metadata'].map((k) => JSON.stringify(v[k]));
    return `${Object.keys(payload.data).sort().join()}|${Object.keys(v).sort().join()}|${erased.join()}|${typeof v.redacted_at}`;
  };
  for (const type of ['verification.status_changed', 'verification.redacted']) {
    const service = sample.rows.find((row) => row.pool === 'service' && row.type === type);
    const floor = sample.rows.find((row) => row.pool === 'floor' && row.type === type);
    if (service && floor && shape(service.body) !== shape(floor.body))
      problems.push(`${type}: the floor's payload differs from the service's:\n  ${service.body}\n  ${floor.body}`);
  }
  return problems;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n)
    ? n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
}

async function main(): Promise<void> {
  const options = readOptions('bench:retention', parseOptions);
  const databaseUrl = benchDatabaseUrl();
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const loadAtStart = loadavg()[0] ?? NaN;
  log(`preparing ${new URL(databaseUrl).pathname.slice(1)} (dropped, created, migrated, seeded)`);
  await recreateBenchDatabase(databaseUrl);
  const seeded = await seed(
    databaseUrl,
    { accounts: options.accounts, aged: options.verifications, recentPerAccount: options.recent },
    log,
  );
  log(`seeded in ${seeded.toFixed(1)} s`);
  await checkSeededBodies(databaseUrl);
  await cleanRedisPrefixes(redisUrl, [QUEUE_PREFIX]);
  const machine = await describeMachine(databaseUrl);

  const env: Record<string, string> = {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    INTERNAL_API_TOKEN: BENCH_INTERNAL_API_TOKEN,
    SECRET_ENCRYPTION_KEY: BENCH_SECRET_ENCRYPTION_KEY,
  };
  if (Object.keys(options.env).length) log(`worker environment overrides: ${JSON.stringify(options.env)}`);

  const processes: BenchProcess[] = [];
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  // The bench's own counts between slices: no parallel workers bursting on the two cores.
  await client.query('SET max_parallel_workers_per_gather = 0');
  const monitor = new Client({ connectionString: databaseUrl });
  await monitor.connect();
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const floor = await FloorRedactor.connect(databaseUrl);
  let list: PacedList | undefined;
  try {
    const serviceTotal = await count(client, SERVICE_REMAINING);
    const floorTotal = await count(client, FLOOR_REMAINING);
    const api = await startService('api', { ...env, APP_ROLE: 'api' });
    processes.push(api);
    const requests: ListRequest[] = Array.from({ length: options.accounts }, (_, i) => ({
      path: `${LIST_PATH}?limit=20`,
      secret: benchSecret(i),
    }));
    for (const request of requests.slice(0, 5)) {
      const res = await fetch(`${api.url}${request.path}`, { headers: { authorization: `Bearer ${request.secret}` } });
      const page = (await res.json()) as { data?: unknown[] };
      if (res.status !== 200 || page.data?.length !== 20)
        throw new Error(`first page: HTTP ${res.status}, ${page.data?.length} rows`);
    }

    const tallies: Record<Kind, LatencyTally> = {
      none: new LatencyTally(),
      pass: new LatencyTally(),
      floor: new LatencyTally(),
    };
    const kindSeconds: Record<Kind, number> = { none: 0, pass: 0, floor: 0 };
    let current: LatencyTally | undefined;
    list = new PacedList(api.url, requests, options.rate, () => current);
    list.start();

    // The deployment's worker, with the retention policy on; its pass starts RETENTION_INTERVAL_MS
    // after bootstrap and, with rows left, runs until the pool is empty.
    const workerProcess = await startService(
      'worker',
      {
        ...env,
        APP_ROLE: 'worker',
        // info: the pass logs its line when it ends, which is how the bench sees the pool empty.
        LOG_LEVEL: 'info',
        PII_RETENTION_DAYS: String(PII_RETENTION_DAYS),
        RETENTION_INTERVAL_MS: String(RETENTION_INTERVAL_MS),
        ...options.env,
      },
      true,
      options.profileWorker ? ['--cpu-prof', `--cpu-prof-dir=${options.profileWorker}`] : [],
    );
    processes.push(workerProcess);
    const worker = new PausableWorker(workerProcess);
    const apiPid = api.child.pid as number;
    const workerPid = workerProcess.child.pid as number;
    let ended = false;
    let scanned = 0;
    let carry = '';
    /** Whether the pass has logged its line (the output is read once, as it comes). */
    const passEnded = (): boolean => {
      if (!ended && scanned < workerProcess.output.length) {
        const text = carry + workerProcess.output.slice(scanned).join('');
        scanned = workerProcess.output.length;
        ended = passLines([text]).length > 0;
        carry = text.slice(-300);
      }
      return ended;
    };
    /** The pass has ended and the queue holds none of its jobs any more: the pass's work is done. */
    const passDone = async (): Promise<boolean> => passEnded() && (await queueLength(redis)) === 0;
    log(
      `list: ${options.rate} first-page requests/s over ${options.accounts} accounts, open loop; ${options.warmup} s warm-up with the pass running, then the floor for as long`,
    );
    await sleep(options.warmup * 1000);
    await worker.pause();
    const warmFloorUntil = performance.now() + options.warmup * 1000;
    while (performance.now() < warmFloorUntil && (await floor.batch(REDACT_BATCH)) === REDACT_BATCH);
    let serviceLeft = await count(client, SERVICE_REMAINING);
    let floorLeft = await count(client, FLOOR_REMAINING);
    const warmUp = { pass: serviceTotal - serviceLeft, floor: floorTotal - floorLeft };
    log(`warm-up: the pass redacted ${warmUp.pass} verifications, the floor ${warmUp.floor}; not counted`);
    worker.takeRunningSeconds();

    const redactions: Record<'pass' | 'floor', Redaction> = {
      pass: { rows: 0, seconds: 0, slices: 0 },
      floor: { rows: 0, seconds: 0, slices: 0 },
    };
    const slices: SliceRecord[] = [];
    const sliceMs = options.slice * 1000;
    const startedAt = Date.now();

    /** Counts the list into a tally of its own while `run` runs: one slice. */
    /** CPU seconds the api process and the worker used, per kind of slice. */
    type Cpu = { api: number; worker: number; postgres: number; shared: number; machine: number; steal: number };
    const zero = (): Cpu => ({ api: 0, worker: 0, postgres: 0, shared: 0, machine: 0, steal: 0 });
    const cpu: Record<Kind, Cpu> = { none: zero(), pass: zero(), floor: zero() };
    // Redis and PostgreSQL's own background processes serve anything else on the machine too.
    const sharedPids = pidsOf(/^(redis-server|postgres: \S+: (walwriter|checkpointer|background writer))/);
    type Measured = {
      tally: LatencyTally;
      seconds: number;
      autovacuum: boolean;
      cpu: Cpu;
    };
    const slice = async (run: () => Promise<void>): Promise<Measured> => {
      const tally = new LatencyTally();
      let autovacuum = false;
      const sampler = setInterval(() => {
        void autovacuumRunning(monitor).then((seen) => (autovacuum ||= seen));
      }, 500);
      const backends = await backendPids(monitor);
      const sum = (pids: number[]): number =>
        pids.map(cpuSeconds).reduce((a, b) => (Number.isFinite(b) ? a + b : a), 0);
      const sample = (): Cpu => {
        const m = machineCpu();
        return {
          api: cpuSeconds(apiPid),
          worker: cpuSeconds(workerPid),
          postgres: sum(backends),
          shared: sum(sharedPids),
          machine: m.busy,
          steal: m.steal,
        };
      };
      const before = sample();
      current = tally;
      const t0 = performance.now();
      try {
        await run();
      } finally {
        current = undefined;
        clearInterval(sampler);
      }
      return {
        tally,
        seconds: (performance.now() - t0) / 1000,
        autovacuum,
        cpu: Object.fromEntries(
          Object.entries(sample()).map(([key, value]) => [key, value - before[key as keyof Cpu]]),
        ) as Cpu,
      };
    };

    /** Once its last responses are in: the slice's figures, logged and added to its kind's. */
    const record = async (
      round: number,
      kind: Kind,
      { tally, seconds, autovacuum, cpu: used }: Measured,
      rows: number,
      note = '',
    ): Promise<void> => {
      await tally.settled();
      tallies[kind].latencies.push(...tally.latencies);
      tallies[kind].failures += tally.failures;
      kindSeconds[kind] += seconds;
      for (const key of Object.keys(used) as (keyof Cpu)[]) cpu[kind][key] += used[key];
      const entry: SliceRecord = {
        round,
        kind,
        seconds,
        requests: tally.latencies.length,
        p50: tally.percentile(0.5),
        p99: tally.percentile(0.99),
        rows,
        load1: loadavg()[0] ?? NaN,
        autovacuum,
      };
      slices.push(entry);
      log(
        `round ${String(round).padStart(2)} ${kind.padEnd(5)} ${seconds.toFixed(1)} s, list ${entry.requests} requests, p50 ${entry.p50.toFixed(1)} ms, p99 ${entry.p99.toFixed(1)} ms${kind === 'none' ? '' : `, ${rows} verifications redacted`}${note} (load ${entry.load1.toFixed(2)}${autovacuum ? ', autovacuum running' : ''})`,
      );
    };

    /** The worker continued for `sliceMs` (or until its pass ends), then paused at a quiet moment. */
    const passSlice = async (round: number): Promise<boolean> => {
      const measured = await slice(async () => {
        worker.resume();
        const deadline = performance.now() + sliceMs;
        while (performance.now() < deadline && !(await passDone())) await sleep(10);
      });
      const done = await passDone();
      if (!done) await worker.pause();
      const seconds = worker.takeRunningSeconds();
      const left = await count(client, SERVICE_REMAINING);
      const rows = serviceLeft - left;
      serviceLeft = left;
      redactions.pass.rows += rows;
      redactions.pass.seconds += seconds;
      redactions.pass.slices++;
      await record(
        round,
        'pass',
        measured,
        rows,
        ` in ${seconds.toFixed(1)} s running${done ? ', pass ended and its jobs done' : passEnded() ? ', pass ended, jobs left' : ''}`,
      );
      return done;
    };

    /** The floor redacts its own pool, a batch at a time, for `sliceMs` or until its pool is empty. */
    const floorSlice = async (round: number): Promise<void> => {
      let rows = 0;
      const measured = await slice(async () => {
        const deadline = performance.now() + sliceMs;
        for (let n = REDACT_BATCH; n === REDACT_BATCH && performance.now() < deadline;) {
          n = await floor.batch(REDACT_BATCH);
          rows += n;
          // The same pause between batches as the pass takes.
          if (REDACT_PAUSE_MS > 0 && n === REDACT_BATCH) await sleep(REDACT_PAUSE_MS);
        }
      });
      floorLeft -= rows;
      redactions.floor.seconds += measured.seconds;
      redactions.floor.rows += rows;
      redactions.floor.slices++;
      await record(round, 'floor', measured, rows);
    };

    let rounds = 0;
    let finished = false;
    for (let round = 1; !finished; round++) {
      rounds = round;
      const order = [...KINDS.slice((round - 1) % 3), ...KINDS.slice(0, (round - 1) % 3)];
      for (const kind of order) {
        if (kind === 'pass' && !finished) finished = await passSlice(round);
        else if (kind === 'floor' && floorLeft > 0) await floorSlice(round);
        else if (kind === 'none') await record(round, 'none', await slice(() => sleep(sliceMs)), 0);
      }
      if (round >= 2 && redactions.pass.rows === 0) throw new Error('the pass makes no progress');
    }
    const measuredSeconds = (Date.now() - startedAt) / 1000;
    await list.stop();
    const maxLagMs = list.maxLagMs;
    list = undefined;
    await workerProcess.stop();
    processes.splice(processes.indexOf(workerProcess), 1);
    const warnings = workerProcess.output.join('').match(/"level":(40|50)[^\n]*/g) ?? [];

    const problems = await checkErasure(client, serviceTotal, floorTotal - floorLeft);
    const loadAtEnd = loadavg()[0] ?? NaN;

    // The summary.
    const m = (kind: Kind) => ({
      requests: tallies[kind].latencies.length,
      p50: tallies[kind].percentile(0.5),
      p99: tallies[kind].percentile(0.99),
      failures: tallies[kind].failures,
      seconds: kindSeconds[kind],
      apiCpuMsPerRequest: (cpu[kind].api * 1000) / tallies[kind].latencies.length,
      autovacuumSlices: slices.filter((s) => s.kind === kind && s.autovacuum).length,
      slices: slices.filter((s) => s.kind === kind).length,
    });
    const none = m('none');
    const pass = m('pass');
    const fl = m('floor');
    const passRate = redactions.pass.rows / redactions.pass.seconds;
    const floorRate = redactions.floor.rows / redactions.floor.seconds;
    const perRound = (kind: Kind): number[] =>
      slices
        .filter((s) => s.kind === kind)
        .flatMap((s) => {
          const base = slices.find((b) => b.kind === 'none' && b.round === s.round);
          return base && base.p99 > 0 && s.seconds >= options.slice / 2 ? [s.p99 / base.p99] : [];
        });

    log('');
    log(
      `Machine: ${machine}; PostgreSQL, Redis, the api process, the worker and this driver (list load, floor) share it.`,
    );
    log(
      `Data: ${options.accounts} accounts without a webhook URL; ${fmt(serviceTotal)} aged verifications for the pass (PII_RETENTION_DAYS=${PII_RETENTION_DAYS}, decided ${SERVICE_POOL.minDays}-${SERVICE_POOL.maxDays} days ago) and ${fmt(floorTotal)} for the floor (${FLOOR_POOL.minDays}-${FLOOR_POOL.maxDays} days), 3 events each, a third of their attempts with a response excerpt; ${options.recent} recent verifications per account.`,
    );
    log(
      `List: ${options.rate} first-page requests/s, open loop, one account after another (max send lag ${fmt(maxLagMs)} ms). Slices of ${options.slice} s rotated pass / floor / none, ${rounds} rounds, ${fmt(measuredSeconds)} s; REDACT_BATCH=${REDACT_BATCH} and REDACT_PAUSE_MS=${REDACT_PAUSE_MS}, the floor's batches and pauses the same.`,
    );
    log(
      `Warm-up (not counted): ${warmUp.pass} verifications by the pass, ${warmUp.floor} by the floor. Pauses: ${worker.pauses}, each within ${fmt(worker.maxPauseWaitMs)} ms of being asked.`,
    );
    log(
      `Load average (1 min): ${loadAtStart.toFixed(2)} at start, ${loadAtEnd.toFixed(2)} at end (anything else running on the machine shows here).`,
    );
    log('');
    log(
      '| list first page, paced | requests | seconds | p50 ms | p99 ms | p99 ÷ none | median per-round p99 ratio | api CPU ms per request | slices (with autovacuum) |',
    );
    log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
    const row = (label: string, x: ReturnType<typeof m>, ratios: number[] | undefined): string =>
      `| ${label} | ${fmt(x.requests)} | ${fmt(x.seconds, 1)} | ${fmt(x.p50, 1)} | ${fmt(x.p99, 1)} | ${fmt(x.p99 / none.p99, 2)} | ${ratios ? fmt(median(ratios), 2) : '—'} | ${fmt(x.apiCpuMsPerRequest, 2)} | ${x.slices} (${x.autovacuumSlices}) |`;
    log(row('none: the list alone', none, undefined));
    log(row('pass: the retention pass running', pass, perRound('pass')));
    log(row('floor: the floor redacting', fl, perRound('floor')));
    log('');
    log('| redaction, under the list load | verifications | seconds running | slices | verifications/s |');
    log('|---|---:|---:|---:|---:|');
    log(
      `| service: the retention pass in the worker | ${fmt(redactions.pass.rows)} | ${fmt(redactions.pass.seconds, 1)} | ${redactions.pass.slices} | ${fmt(passRate)} |`,
    );
    log(
      `| floor: one SQL statement per batch | ${fmt(redactions.floor.rows)} | ${fmt(redactions.floor.seconds, 1)} | ${redactions.floor.slices} | ${fmt(floorRate)} |`,
    );
    log(`| service ÷ floor | | | | ${fmt(passRate / floorRate, 2)} |`);
    log('');
    log(
      '| CPU, cores busy on average | api process | worker | PostgreSQL backends of this database | Redis, PostgreSQL background (shared) | whole machine (of 2) | stolen by the hypervisor |',
    );
    log('|---|---:|---:|---:|---:|---:|---:|');
    for (const kind of ['none', 'pass', 'floor'] as const) {
      const c = cpu[kind];
      const t = kindSeconds[kind];
      log(
        `| ${kind} | ${fmt(c.api / t, 2)} | ${fmt(c.worker / t, 2)} | ${fmt(c.postgres / t, 2)} | ${fmt(c.shared / t, 2)} | ${fmt(c.machine / t, 2)} | ${fmt(c.steal / t, 2)} |`,
      );
    }
    // CPU per verification: what the slices of a kind used beyond the list alone's rate.
    const extra = (kind: 'pass' | 'floor', part: 'worker' | 'postgres' | 'shared'): number =>
      ((cpu[kind][part] - (cpu.none[part] / kindSeconds.none) * kindSeconds[kind]) * 1e6) / redactions[kind].rows;
    log(
      `CPU per verification beyond the list alone: the pass ${fmt(extra('pass', 'worker'))} µs in the worker (its delivery jobs included) + ${fmt(extra('pass', 'postgres'))} µs in PostgreSQL backends + ${fmt(extra('pass', 'shared'))} µs in Redis and PostgreSQL's background; the floor ${fmt(extra('floor', 'postgres'))} + ${fmt(extra('floor', 'shared'))} µs.`,
    );
    log('');
    const ratio = pass.p99 / none.p99;
    log(
      `${ratio <= 1.3 ? 'PASS' : 'FAIL'}  list p99 while the pass runs within 1.3 x the list alone (${fmt(pass.p99, 1)} vs ${fmt(none.p99, 1)} ms = ${fmt(ratio, 2)} x)`,
    );
    log(
      `info  the pass redacted at ${fmt(passRate / floorRate, 2)} x the floor's rate (${fmt(passRate)} vs ${fmt(floorRate)} verifications/s); list p99 while the floor redacts: ${fmt(fl.p99 / none.p99, 2)} x the list alone`,
    );
    for (const warning of warnings.slice(0, 5)) log(`WARNING: the worker logged ${warning}`);
    for (const problem of problems) log(`WARNING: ${problem}`);
    const failures = none.failures + pass.failures + fl.failures;
    if (failures > 0) log(`WARNING: ${failures} list requests failed; the figures above are suspect`);
    if (options.out)
      writeFileSync(
        options.out,
        JSON.stringify(
          { machine, options, none, pass, floor: fl, redactions, cpu, warmUp, slices, loadAtStart, loadAtEnd },
          null,
          2,
        ) + '\n',
      );
  } finally {
    await list?.stop();
    for (const p of processes.splice(0).reverse()) await p.stop();
    await floor.close();
    await client.end();
    await monitor.end();
    redis.disconnect();
    const deleted = await cleanRedisPrefixes(redisUrl, [QUEUE_PREFIX]).catch(() => 0);
    log(`cleaned ${deleted} Redis keys under ${QUEUE_PREFIX}:*`);
    if (!options.keepDatabase) {
      await dropBenchDatabase(databaseUrl).catch(() => undefined);
      log(`dropped ${new URL(databaseUrl).pathname.slice(1)} (--keep-database keeps it)`);
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:retention failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
