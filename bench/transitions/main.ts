/**
 * npm run bench:transitions — status changes through the internal API. See docs/performance.md.
 *
 * Part 1: POST /api/v1/internal/kyc/verifications/{id}/transitions on one APP_ROLE=api process
 * beside a naive bare node:http + pg floor (floor-server.ts), in interleaved slices as bench:list
 * runs them, no worker. Part 2, on a re-created database: the same route with one APP_ROLE=worker
 * process delivering the webhooks to a receiver in this process, at the API's maximum rate (closed
 * loop) and at half of it (open loop).
 *
 * Options: --duration <s> (15, per target: cut into --slices <n> (5), the first 0.5 s of each left
 * out), --warmup <s> (3), --connections <n> (50), --changes <n> (10000, part 2's max-rate run),
 * --paced <s> (15, part 2's open-loop run), --out <file.json> (raw figures).
 */
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import { benchDatabaseUrlFrom, cleanRedisPrefixes, describeMachine, warnIfFewConnections } from '../common/bench-db';
import { parseFlags, positiveInteger, readOptions } from '../common/flags';
import { SETTLE_MS } from '../common/slices';
import { BENCH_ADMIN_TOKEN, BENCH_INTERNAL_API_TOKEN, webhookServiceEnv } from '../webhooks/bench-setup';
import { BenchReceiver } from '../webhooks/receiver';
import { EndToEndFigures, measureEndToEnd } from './end-to-end-phase';
import { RouteFigures, measureRoute } from './route-phase';

/** This benchmark's Redis prefix: cleaned at the start and the end. */
const PREFIX = 'kyc_trbench';

interface Options {
  duration: number;
  slices: number;
  warmup: number;
  connections: number;
  changes: number;
  paced: number;
  out?: string;
}

function parseOptions(argv: string[]): Options {
  const values = parseFlags(argv, {
    duration: { type: 'string' },
    slices: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    changes: { type: 'string' },
    paced: { type: 'string' },
    out: { type: 'string' },
  });
  return {
    duration: positiveInteger(values, 'duration', 15),
    slices: positiveInteger(values, 'slices', 5),
    warmup: positiveInteger(values, 'warmup', 3),
    connections: positiveInteger(values, 'connections', 50),
    changes: positiveInteger(values, 'changes', 10_000),
    paced: positiveInteger(values, 'paced', 15),
    out: values.out,
  };
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function table(route: RouteFigures, e2e: EndToEndFigures, options: Options): string {
  const n = (x: number, digits = 0): string => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
  const { service: s, floor: f } = route;
  const c = e2e.paced.commitToArrival;
  const r = e2e.paced.responseToArrival;
  const rows: [string, string][] = [
    [`route, service (APP_ROLE=api, no worker): req/s, p50 / p99`, `${n(s.rps)}, ${s.p50} / ${s.p99} ms`],
    [`route, naive floor (node:http + pg): req/s, p50 / p99`, `${n(f.rps)}, ${f.p50} / ${f.p99} ms`],
    ['route, service / floor (overall; median of per-slice ratios)', `${n(route.ratio, 2)}; ${n(route.sliceRatio, 2)}`],
    [`end to end, max rate (${options.connections} connections): transitions/s`, n(e2e.maxRate.transitionsPerSec)],
    ['  deliveries/s (received ÷ (last arrival − first request))', n(e2e.maxRate.deliveriesPerSec)],
    ['  deliveries/s ÷ transitions/s', n(e2e.maxRate.keepUp, 2)],
    ['  last webhook after the last change answered', `${e2e.maxRate.lastArrivalAfterLastResponseMs} ms`],
    [
      `end to end, paced at ${e2e.paced.rate}/s (achieved ${n(e2e.paced.achievedRate)}/s): commit→arrival p50 / p95 / p99 (max)`,
      `${c.p50} / ${c.p95} / ${c.p99} ms (${c.max})`,
    ],
    ['  response→arrival p50 / p95 / p99', `${r.p50} / ${r.p95} / ${r.p99} ms`],
    [
      'signatures verified with standardwebhooks (sample)',
      `${e2e.signatures.checked - e2e.signatures.failed}/${e2e.signatures.checked}`,
    ],
  ];
  return ['| measure | value |', '|---|---:|', ...rows.map(([k, v]) => `| ${k} | ${v} |`)].join('\n');
}

function targets(route: RouteFigures, e2e: EndToEndFigures): string[] {
  const verdict = (ok: boolean): string => (ok ? 'PASS' : 'FAIL');
  const p99 = e2e.paced.commitToArrival.p99;
  return [
    `${verdict(route.ratio >= 1)}  transitions >= 1.0 x their naive floor (${route.service.rps.toFixed(0)} vs ${route.floor.rps.toFixed(0)} req/s = ${route.ratio.toFixed(2)} x; median slice ratio ${route.sliceRatio.toFixed(2)})`,
    `${verdict(e2e.maxRate.keepUp >= 0.9)}  deliveries keep up (>= 0.9 x transitions/s at the max rate: ${e2e.maxRate.deliveriesPerSec.toFixed(0)} vs ${e2e.maxRate.transitionsPerSec.toFixed(0)} = ${e2e.maxRate.keepUp.toFixed(2)})`,
    `${verdict(p99 < 250)}  p99 commit→arrival < 250 ms at half the max rate (${p99} ms at ${e2e.paced.rate}/s)`,
  ];
}

async function main(): Promise<void> {
  const options = readOptions('bench:transitions', parseOptions);
  const databaseUrl = benchDatabaseUrlFrom('BENCH_TRANSITIONS_DATABASE_URL', 'kyc_transitions_bench');
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  await cleanRedisPrefixes(redisUrl, [PREFIX]);
  const machine = await describeMachine(databaseUrl);
  // Each service process may open 30 (TypeORM's pool of 20, the raw pool of 10): two in part 2.
  await warnIfFewConnections(databaseUrl, 2 * 30 + 2, log);
  const loadAtStart = loadavg()[0] ?? NaN;
  const receiver = new BenchReceiver();
  await receiver.start();
  const env = webhookServiceEnv(databaseUrl, redisUrl, PREFIX, 50);
  const tokens = { admin: BENCH_ADMIN_TOKEN, internal: BENCH_INTERNAL_API_TOKEN };
  const sliceSeconds = Math.max(1, Math.round(options.duration / options.slices));
  try {
    log(`part 1: the transitions route, service beside the naive floor, ${options.connections} connections`);
    const route = await measureRoute(
      databaseUrl,
      env,
      tokens,
      receiver,
      { connections: options.connections, warmup: options.warmup, slices: options.slices, sliceSeconds },
      log,
    );
    log(`part 1 left ${route.pendingEvents} outbox events pending, undelivered (no worker ran); part 2 starts afresh`);
    await cleanRedisPrefixes(redisUrl, [PREFIX]);
    log(
      `part 2: end to end through the worker, ${options.changes} changes at the max rate, then ${options.paced} s paced`,
    );
    const e2e = await measureEndToEnd(
      databaseUrl,
      env,
      tokens,
      receiver,
      { connections: options.connections, changes: options.changes, pacedSeconds: options.paced },
      log,
    );
    log('');
    log(
      `Machine: ${machine}; part 1: ${options.warmup} s warm-up per target, then ${options.slices} slices of ${sliceSeconds} s per target, interleaved (the first ${SETTLE_MS} ms of each left out);`,
    );
    log(
      `client, receiver and bench in this process, the service, worker and floor in their own, all on one machine with PostgreSQL and Redis.`,
    );
    log(`Load average (1 min): ${loadAtStart.toFixed(2)} at start, ${(loadavg()[0] ?? NaN).toFixed(2)} at end.`);
    log('');
    log(table(route, e2e, options));
    log('');
    for (const line of targets(route, e2e)) log(line);
    const failures = route.service.failures + route.floor.failures + e2e.maxRate.errors + e2e.paced.errors;
    const missing = e2e.maxRate.missing + e2e.paced.missing;
    if (failures + missing + e2e.signatures.failed > 0)
      log(
        `WARNING: ${failures} failed changes, ${missing} webhooks missing, ${e2e.signatures.failed} bad signatures; the figures above are suspect`,
      );
    if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, route, e2e }, null, 2) + '\n');
  } finally {
    await receiver.close();
    const deleted = await cleanRedisPrefixes(redisUrl, [PREFIX]).catch(() => 0);
    log(`cleaned ${deleted} Redis keys under ${PREFIX}:*`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:transitions failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
