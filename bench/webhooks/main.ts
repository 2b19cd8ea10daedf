/**
 * npm run bench:webhooks — webhook delivery of the real service (compiled dist/, its own database
 * and queue prefix) to a local receiver, beside two floors measured in the same run: a plain Bull
 * queue doing the same POST with no database, and a raw HTTP POST loop. See docs/performance.md.
 *
 * Options: --changes <n> (20000 per phase), --connections <n> (50 client connections for the
 * throughput phase), --rate <n> (200 changes/s for the latency phase), --accounts <n> (50),
 * --verifications <n> (1000), --concurrency <n> (WEBHOOK_CONCURRENCY, 50), --role split|all
 * (split: one APP_ROLE=api and one APP_ROLE=worker process, as docker-compose.yml deploys; all: one
 * process), --no-drain (skip the backlog-drain phase), --out <file.json> (raw figures),
 * --profile-worker <dir> (the draining worker writes a V8 CPU profile there), --skip <list> (any of
 * throughput,latency,drain,floors: for quicker iterations; the full run is the one to record),
 * --env KEY=VALUE (repeatable: extra environment for the service processes, for experiments).
 */
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { describeMachine } from '../common/bench-db';
import { FlagError, parseFlags, positiveInteger, readOptions } from '../common/flags';
import {
  BENCH_ADMIN_TOKEN,
  BENCH_INTERNAL_API_TOKEN,
  FLOOR_PREFIX,
  SERVICE_PREFIX,
  ServiceProcess,
  benchDatabaseUrl,
  cleanRedis,
  prepareBenchDatabase,
  runFloor,
  startService,
  webhookServiceEnv,
} from './bench-setup';
import { Percentiles, collect as collectArrivals, percentiles } from './arrivals';
import { createBenchData } from './bench-data';
import { ApiClient, DriveResult, driveFlat, drivePaced } from './driver';
import type { FloorResult } from './floor';
import { Arrival, BenchReceiver, verifySample } from './receiver';

interface Options {
  changes: number;
  connections: number;
  rate: number;
  accounts: number;
  verifications: number;
  concurrency: number;
  role: 'split' | 'all';
  drain: boolean;
  out?: string;
  profileWorker?: string;
  skip: string[];
  env: Record<string, string>;
}

interface Figures {
  throughput: {
    changes: number;
    transitionsPerSec: number;
    deliveriesPerSec: number;
    drainAfterLastCommitMs: number;
    errors: number;
    missing: number;
  };
  latency: {
    changes: number;
    achievedRate: number;
    maxLagMs: number;
    commitToArrival: Percentiles;
    responseToArrival: Percentiles;
    errors: number;
    missing: number;
  };
  drain?: { changes: number; deliveriesPerSec: number; missing: number };
  bullFloor: { jobs: number; deliveriesPerSec: number; failures: number };
  rawFloor: { jobs: number; deliveriesPerSec: number; failures: number };
  signatures: { checked: number; failed: number };
  duplicates: number;
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

const PHASES = ['throughput', 'latency', 'drain', 'floors'];

/** --skip's comma-separated phases; a typo would otherwise run the phase it meant to skip. */
function phasesToSkip(list = ''): string[] {
  const phases = list.split(',').filter(Boolean);
  const unknown = phases.find((phase) => !PHASES.includes(phase));
  if (unknown !== undefined) throw new FlagError(`--skip: "${unknown}" is none of ${PHASES.join(', ')}`);
  return phases;
}

/** The --env KEY=VALUE pairs (the value may hold "=" itself). */
function extraEnv(pairs: string[] = []): Record<string, string> {
  const bad = pairs.find((pair) => !/^[^=]+=/.test(pair));
  if (bad !== undefined) throw new FlagError(`--env needs KEY=VALUE, not "${bad}"`);
  return Object.fromEntries(pairs.map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
}

function parseOptions(argv: string[]): Options {
  const values = parseFlags(argv, {
    changes: { type: 'string' },
    connections: { type: 'string' },
    rate: { type: 'string' },
    accounts: { type: 'string' },
    verifications: { type: 'string' },
    concurrency: { type: 'string' },
    role: { type: 'string', default: 'split' },
    'no-drain': { type: 'boolean' },
    out: { type: 'string' },
    'profile-worker': { type: 'string' },
    skip: { type: 'string' },
    env: { type: 'string', multiple: true },
  });
  if (values.role !== 'split' && values.role !== 'all') throw new FlagError('--role is split or all');
  return {
    changes: positiveInteger(values, 'changes', 20_000),
    connections: positiveInteger(values, 'connections', 50),
    rate: positiveInteger(values, 'rate', 200),
    accounts: positiveInteger(values, 'accounts', 50),
    verifications: positiveInteger(values, 'verifications', 1_000),
    concurrency: positiveInteger(values, 'concurrency', 50),
    role: values.role,
    drain: values['no-drain'] !== true,
    out: values.out,
    profileWorker: values['profile-worker'],
    env: extraEnv(values.env),
    skip: phasesToSkip(values.skip),
  };
}

interface Payload {
  data: { verification: { id: string; version: number; updated_at: string } };
}

async function collect(
  receiver: BenchReceiver,
  expected: number,
  what: string,
): Promise<{ arrivals: Arrival[]; missing: number; duplicates: number }> {
  return collectArrivals(receiver, expected, what, log);
}

function describeDrive(what: string, drive: DriveResult): void {
  const seconds = (drive.finished - drive.started) / 1000;
  log(
    `${what}: ${drive.ok} changes in ${seconds.toFixed(1)} s (${(drive.ok / seconds).toFixed(0)}/s)${drive.errors ? `, ${drive.errors} FAILED (first: ${drive.firstError})` : ''}`,
  );
}

async function main(): Promise<void> {
  const options = readOptions('bench:webhooks', parseOptions);
  const databaseUrl = benchDatabaseUrl();
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  log(`preparing ${new URL(databaseUrl).pathname.slice(1)} (dropped, created, migrated)`);
  await prepareBenchDatabase(databaseUrl);
  await cleanRedis(redisUrl);
  const machine = await describeMachine(databaseUrl);
  const loadAtStart = loadavg()[0] ?? NaN;

  const receiver = new BenchReceiver();
  await receiver.start();
  const env: Record<string, string> = {
    ...webhookServiceEnv(databaseUrl, redisUrl, SERVICE_PREFIX, options.concurrency),
    ...options.env,
  };
  if (Object.keys(options.env).length) log(`service environment overrides: ${JSON.stringify(options.env)}`);
  const processes: ServiceProcess[] = [];
  const stopAll = async (): Promise<void> => {
    for (const p of processes.splice(0).reverse()) await p.stop();
  };
  let api: ApiClient | undefined;
  try {
    let worker: ServiceProcess | undefined;
    let apiProcess: ServiceProcess;
    if (options.role === 'split') {
      apiProcess = await startService('api', { ...env, APP_ROLE: 'api' });
      processes.push(apiProcess);
      worker = await startService('worker', { ...env, APP_ROLE: 'worker' });
      processes.push(worker);
    } else {
      apiProcess = await startService('service', { ...env, APP_ROLE: 'all' });
      processes.push(apiProcess);
    }
    api = new ApiClient(apiProcess.url, Math.max(options.connections, 64));
    const client = api;

    // Accounts, each with its own receiver path (so the signature check knows the secret).
    const { secrets, verifications } = await createBenchData(
      client,
      { admin: BENCH_ADMIN_TOKEN, internal: BENCH_INTERNAL_API_TOKEN },
      options.accounts,
      options.verifications,
      (account) => receiver.urlFor(account),
    );
    log(
      `${options.accounts} accounts, ${options.verifications} verifications; service: ${options.role === 'split' ? 'one APP_ROLE=api + one APP_ROLE=worker process' : 'one APP_ROLE=all process'}, WEBHOOK_CONCURRENCY=${options.concurrency}`,
    );
    const secretFor = (arrival: Arrival): string => secrets[arrival.account] as string;
    let signatures: [number, number] = [0, 0];
    let duplicates = 0;
    const check = (arrivals: Arrival[]): void => {
      const [checked, failed] = verifySample(arrivals, secretFor);
      signatures = [signatures[0] + checked, signatures[1] + failed];
    };

    // Warm-up: connections, JIT, pools; not measured.
    const warm = Math.min(1_000, options.changes);
    const warmDrive = await driveFlat(client, BENCH_INTERNAL_API_TOKEN, verifications, warm, options.connections);
    describeDrive('warm-up', warmDrive);
    const warmed = await collect(receiver, warmDrive.ok, 'warm-up');
    check(warmed.arrivals);
    const sampleBody = warmed.arrivals[0]?.body;
    if (!sampleBody) throw new Error('no webhook arrived during the warm-up');

    const runs = (phase: string): boolean => !options.skip.includes(phase);

    // (a) Throughput: closed loop at a fixed client concurrency.
    const measureThroughput = async (): Promise<Figures['throughput']> => {
      log(`throughput: ${options.changes} changes over ${options.connections} client connections`);
      const flat = await driveFlat(
        client,
        BENCH_INTERNAL_API_TOKEN,
        verifications,
        options.changes,
        options.connections,
      );
      describeDrive('throughput', flat);
      const flatArrived = await collect(receiver, flat.ok, 'throughput');
      check(flatArrived.arrivals);
      duplicates += flatArrived.duplicates;
      const lastFlatArrival = Math.max(...flatArrived.arrivals.map((a) => a.at));
      const throughput = {
        changes: flat.ok,
        transitionsPerSec: flat.ok / ((flat.finished - flat.started) / 1000),
        deliveriesPerSec: flatArrived.arrivals.length / ((lastFlatArrival - flat.started) / 1000),
        drainAfterLastCommitMs: lastFlatArrival - flat.finished,
        errors: flat.errors,
        missing: flatArrived.missing,
      };
      log(
        `throughput: ${throughput.deliveriesPerSec.toFixed(0)} deliveries/s; last webhook ${throughput.drainAfterLastCommitMs} ms after the last response`,
      );
      return throughput;
    };
    const throughput = runs('throughput')
      ? await measureThroughput()
      : {
          changes: 0,
          transitionsPerSec: NaN,
          deliveriesPerSec: NaN,
          drainAfterLastCommitMs: NaN,
          errors: 0,
          missing: 0,
        };

    // (b) Latency: open loop at a fixed rate.
    const measureLatency = async (): Promise<Figures['latency']> => {
      log(
        `latency: ${options.changes} changes at ${options.rate}/s (${(options.changes / options.rate).toFixed(0)} s)`,
      );
      const paced = await drivePaced(client, BENCH_INTERNAL_API_TOKEN, verifications, options.changes, options.rate);
      describeDrive('latency', paced);
      const pacedArrived = await collect(receiver, paced.ok, 'latency');
      check(pacedArrived.arrivals);
      duplicates += pacedArrived.duplicates;
      const commitToArrival: number[] = [];
      const responseToArrival: number[] = [];
      for (const arrival of pacedArrived.arrivals) {
        const v = (JSON.parse(arrival.body) as Payload).data.verification;
        commitToArrival.push(arrival.at - Date.parse(v.updated_at));
        const responded = paced.responded.get(`${v.id}:${v.version}`);
        if (responded !== undefined) responseToArrival.push(arrival.at - responded);
      }
      const latency = {
        changes: paced.ok,
        achievedRate: paced.ok / ((paced.finished - paced.started) / 1000),
        maxLagMs: Math.round(paced.maxLagMs),
        commitToArrival: percentiles(commitToArrival),
        responseToArrival: percentiles(responseToArrival),
        errors: paced.errors,
        missing: pacedArrived.missing,
      };
      const c = latency.commitToArrival;
      log(
        `latency: commit→arrival p50 ${c.p50} ms, p95 ${c.p95} ms, p99 ${c.p99} ms, max ${c.max} ms (driver lag max ${latency.maxLagMs} ms)`,
      );
      return latency;
    };
    const none = percentiles([]);
    const latency = runs('latency')
      ? await measureLatency()
      : {
          changes: 0,
          achievedRate: NaN,
          maxLagMs: NaN,
          commitToArrival: none,
          responseToArrival: none,
          errors: 0,
          missing: 0,
        };

    // Diagnostic: the worker alone, draining a backlog the API built while it was stopped.
    let drain: Figures['drain'];
    if (options.drain && runs('drain') && worker) {
      await worker.stop();
      processes.splice(processes.indexOf(worker), 1);
      log(`drain: worker stopped; ${options.changes} changes queue up, then a fresh worker drains them`);
      const backlog = await driveFlat(
        client,
        BENCH_INTERNAL_API_TOKEN,
        verifications,
        options.changes,
        options.connections,
      );
      describeDrive('drain (backlog)', backlog);
      const profiling = options.profileWorker ? ['--cpu-prof', `--cpu-prof-dir=${options.profileWorker}`] : [];
      worker = await startService('worker', { ...env, APP_ROLE: 'worker' }, profiling);
      processes.push(worker);
      const drained = await collect(receiver, backlog.ok, 'drain');
      check(drained.arrivals);
      duplicates += drained.duplicates;
      const times = drained.arrivals.map((a) => a.at);
      drain = {
        changes: backlog.ok,
        deliveriesPerSec: drained.arrivals.length / ((Math.max(...times) - Math.min(...times)) / 1000),
        missing: drained.missing,
      };
      log(`drain: ${drain.deliveriesPerSec.toFixed(0)} deliveries/s`);
    }
    await stopAll();

    // Floors, with the service stopped: the same body, signed with an account's secret.
    const floorEnv = {
      FLOOR_JOBS: String(options.changes),
      FLOOR_CONCURRENCY: String(options.concurrency),
      FLOOR_TARGET_URL: receiver.urlFor(0),
      FLOOR_BODY: sampleBody,
      FLOOR_SECRET: secrets[0] as string,
      REDIS_URL: redisUrl,
      FLOOR_QUEUE_PREFIX: FLOOR_PREFIX,
    };
    const floors: Record<'bull' | 'raw', { jobs: number; deliveriesPerSec: number; failures: number }> = {
      bull: { jobs: 0, deliveriesPerSec: NaN, failures: 0 },
      raw: { jobs: 0, deliveriesPerSec: NaN, failures: 0 },
    };
    for (const mode of runs('floors') ? (['bull', 'raw'] as const) : []) {
      const result = await runFloor<FloorResult>({ ...floorEnv, FLOOR_MODE: mode }, 300_000);
      const arrived = await collect(receiver, result.delivered, `${mode} floor`);
      check(arrived.arrivals);
      const last = Math.max(...arrived.arrivals.map((a) => a.at));
      floors[mode] = {
        jobs: result.delivered,
        deliveriesPerSec: arrived.arrivals.length / ((last - result.started) / 1000),
        failures: result.failures,
      };
      log(
        `${mode} floor: ${floors[mode].deliveriesPerSec.toFixed(0)} deliveries/s${result.failures ? `, ${result.failures} FAILED` : ''}`,
      );
    }

    const figures: Figures = {
      throughput,
      latency,
      drain,
      bullFloor: floors.bull,
      rawFloor: floors.raw,
      signatures: { checked: signatures[0], failed: signatures[1] },
      duplicates,
    };
    log('');
    log(
      `Machine: ${machine}; service ${options.role === 'split' ? 'APP_ROLE=api + APP_ROLE=worker (docker-compose.yml)' : 'APP_ROLE=all'}, WEBHOOK_CONCURRENCY=${options.concurrency};`,
    );
    log(
      `${options.accounts} accounts, ${options.verifications} verifications, ${options.changes} changes per phase; driver and receiver in this process, all on one machine with PostgreSQL and Redis.`,
    );
    log(
      `Load average (1 min): ${loadAtStart.toFixed(2)} at start, ${(loadavg()[0] ?? NaN).toFixed(2)} at end (anything else running on the machine shows here).`,
    );
    log('');
    log(table(figures, options));
    log('');
    for (const line of targets(figures)) log(line);
    if (
      figures.signatures.failed > 0 ||
      throughput.missing + latency.missing + (drain?.missing ?? 0) > 0 ||
      throughput.errors + latency.errors > 0
    ) {
      log(
        `WARNING: ${figures.signatures.failed} bad signatures, ${throughput.missing + latency.missing + (drain?.missing ?? 0)} webhooks missing, ${throughput.errors + latency.errors} failed changes; the figures above are suspect`,
      );
    }
    if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, figures }, null, 2) + '\n');
  } finally {
    api?.close();
    await stopAll();
    await receiver.close();
    const deleted = await cleanRedis(redisUrl).catch(() => 0);
    log(`cleaned ${deleted} Redis keys under ${SERVICE_PREFIX}:* and ${FLOOR_PREFIX}:*`);
  }
}

function table(f: Figures, options: Options): string {
  const n = (x: number, digits = 0): string => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
  const c = f.latency.commitToArrival;
  const r = f.latency.responseToArrival;
  const rows = [
    [
      'service deliveries/s (throughput phase, changes via API at ' + options.connections + ' client connections)',
      n(f.throughput.deliveriesPerSec),
    ],
    ['  API status changes/s in that phase', n(f.throughput.transitionsPerSec)],
    ['  last webhook after the last change answered', `${f.throughput.drainAfterLastCommitMs} ms`],
    ...(f.drain
      ? [
          [
            'service worker alone, draining a backlog of ' + f.drain.changes + ', deliveries/s',
            n(f.drain.deliveriesPerSec),
          ],
        ]
      : []),
    [
      `commit→arrival at ${options.rate} changes/s, p50 / p95 / p99 (max)`,
      `${c.p50} / ${c.p95} / ${c.p99} ms (${c.max})`,
    ],
    ['  response→arrival, p50 / p95 / p99', `${r.p50} / ${r.p95} / ${r.p99} ms`],
    ['plain-Bull floor deliveries/s', n(f.bullFloor.deliveriesPerSec)],
    ['raw-loop floor deliveries/s', n(f.rawFloor.deliveriesPerSec)],
    ['service / plain-Bull floor', n(f.throughput.deliveriesPerSec / f.bullFloor.deliveriesPerSec, 2)],
    ...(f.drain
      ? [['service worker drain / plain-Bull floor', n(f.drain.deliveriesPerSec / f.bullFloor.deliveriesPerSec, 2)]]
      : []),
    ['plain-Bull floor / raw-loop floor', n(f.bullFloor.deliveriesPerSec / f.rawFloor.deliveriesPerSec, 2)],
    [
      'signatures verified with standardwebhooks (sample)',
      `${f.signatures.checked - f.signatures.failed}/${f.signatures.checked}`,
    ],
  ];
  return ['| measure | value |', '|---|---:|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

function targets(f: Figures): string[] {
  const verdict = (ok: boolean): string => (ok ? 'PASS' : 'FAIL');
  const ratio = f.throughput.deliveriesPerSec / f.bullFloor.deliveriesPerSec;
  const p99 = f.latency.commitToArrival.p99;
  return [
    `${verdict(ratio >= 0.5)}  sustained deliveries/s >= 0.5 x plain-Bull floor (${f.throughput.deliveriesPerSec.toFixed(0)} vs ${f.bullFloor.deliveriesPerSec.toFixed(0)} = ${ratio.toFixed(2)} x)`,
    `${verdict(p99 < 250)}  p99 commit→arrival < 250 ms at the paced rate (${p99} ms)`,
    ...(f.drain
      ? [
          `info  worker alone (backlog drain) vs plain-Bull floor: ${(f.drain.deliveriesPerSec / f.bullFloor.deliveriesPerSec).toFixed(2)} x — not the target's measure, but the like-for-like one (both pre-fed, no API in the loop)`,
        ]
      : []),
  ];
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:webhooks failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
