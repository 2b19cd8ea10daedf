/**
 * npm run bench:list — the list route of the public API under load, beside a bare node:http + pg
 * floor doing the same database work, that same work on a bare Nest + Express app (what the
 * framework alone allows), and a bare node:http + pg server answering every request with one
 * SELECT 1 and a fixed body (the ceiling of one database round trip per request). See
 * docs/performance.md.
 *
 * Each scenario measures the four targets in interleaved slices (service, bare Nest, floor,
 * round-trip floor, then the same in rotated order...), so that the machine's own drift during a
 * run weighs on all of them alike; req/s is over all slices, p50/p99 over every response of all
 * slices.
 *
 * Options: --reseed (rebuild the bench database), --duration <s> (15, per target and scenario),
 * --slices <n> (5: the duration is cut into n slices, the first 0.5 s of each left out), --warmup <s> (3),
 * --connections <n> (50), --hops <n> (200), --out <file.json> (raw figures).
 */
import { loadavg } from 'node:os';
import { writeFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { describeMachine, warnIfFewConnections } from '../common/bench-db';
import { parseFlags, positiveInteger, readOptions } from '../common/flags';
import { LoadRun, Measured, SETTLE_MS, autocannonLoad, interleave, median } from '../common/slices';
import { prepareBenchDatabase } from './bench-database';
import { benchDatabaseUrl, benchSecret } from './bench-env';
import {
  FLOOR_MAIN,
  NEST_FLOOR_MAIN,
  ROUND_TRIP_FLOOR_MAIN,
  SERVICE_MAIN,
  Target,
  serviceEnv,
  startTarget,
} from './targets';
import { ACCOUNTS, LIST_PATH, Variant, perAccount, qVariants } from './variants';

interface Options {
  reseed: boolean;
  duration: number;
  slices: number;
  warmup: number;
  connections: number;
  hops: number;
  out?: string;
}

interface Row {
  scenario: string;
  service: Measured;
  /** floor-core.ts on a bare Nest + Express app: what the framework alone allows. */
  nest: Measured;
  floor: Measured;
  /** SELECT 1 and a fixed body on bare node:http: the ceiling of one database round trip per request. */
  trip: Measured;
  /** Median over the slices of service req/s ÷ floor req/s in the same slice. */
  sliceRatio: number;
}

type TargetName = 'service' | 'nest' | 'floor' | 'trip';

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function parseOptions(argv: string[]): Options {
  const values = parseFlags(argv, {
    reseed: { type: 'boolean' },
    duration: { type: 'string' },
    slices: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    hops: { type: 'string' },
    out: { type: 'string' },
  });
  return {
    reseed: values.reseed === true,
    duration: positiveInteger(values, 'duration', 15),
    slices: positiveInteger(values, 'slices', 5),
    warmup: positiveInteger(values, 'warmup', 3),
    connections: positiveInteger(values, 'connections', 50),
    hops: positiveInteger(values, 'hops', 200),
    out: values.out,
  };
}

interface Page {
  data: { id: string }[];
  has_more: boolean;
  next_cursor: string | null;
}

async function getPage(target: Target, variant: Variant): Promise<Page> {
  const res = await fetch(`${target.url}${variant.path}`, { headers: { authorization: `Bearer ${variant.secret}` } });
  if (res.status !== 200) throw new Error(`${target.name} ${variant.path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Page;
}

/** Follows next_cursor `hops` times from the first page, per account, on this target's own cursors. */
async function deepVariants(target: Target, hops: number): Promise<Variant[]> {
  const variants: Variant[] = new Array<Variant>(ACCOUNTS.length);
  let nextAccount = 0;
  const walker = async (): Promise<void> => {
    for (let i = nextAccount++; i < ACCOUNTS.length; i = nextAccount++) {
      const secret = benchSecret(ACCOUNTS[i] as number);
      let path = `${LIST_PATH}?limit=20`;
      for (let hop = 0; hop < hops; hop++) {
        const page = await getPage(target, { path, secret });
        if (!page.next_cursor) throw new Error(`account ${i} ran out of pages after ${hop} hops`);
        path = `${LIST_PATH}?limit=20&cursor=${encodeURIComponent(page.next_cursor)}`;
      }
      variants[i] = { path, secret };
    }
  };
  await Promise.all(Array.from({ length: 16 }, walker));
  return variants;
}

/** The floor must return exactly the service's rows, or the comparison means nothing. */
async function checkSameRows(
  scenario: string,
  service: Target,
  floors: Target[],
  serviceVariants: Variant[],
  floorVariants: Variant[],
): Promise<void> {
  for (let i = 0; i < Math.min(serviceVariants.length, 40); i++) {
    const expected = await getPage(service, serviceVariants[i] as Variant);
    for (const floor of floors) {
      const page = await getPage(floor, floorVariants[i] as Variant);
      const same =
        expected.has_more === page.has_more &&
        expected.data.map((r) => r.id).join() === page.data.map((r) => r.id).join();
      if (!same)
        throw new Error(`${scenario}: the ${floor.name} and the service disagree on ${serviceVariants[i]?.path}`);
    }
  }
}

/** Autocannon runs of GETs over the variants, in turn, each run from the first variant. */
function load(target: Target, variants: Variant[], connections: number): LoadRun {
  return (seconds, tally) => {
    let next = 0;
    const requests: autocannon.Request[] = [
      {
        method: 'GET',
        setupRequest: (request) => {
          const variant = variants[next++ % variants.length] as Variant;
          return { ...request, path: variant.path, headers: { authorization: `Bearer ${variant.secret}` } };
        },
      },
    ];
    return autocannonLoad(target.url, requests, connections, seconds, tally);
  };
}

function table(rows: Row[]): string {
  const fmt = (n: number, digits = 0): string => n.toFixed(digits);
  const lines = [
    '| scenario | service req/s | p50 ms | p99 ms | floor req/s | p50 ms | p99 ms | ratio | median slice ratio | bare Nest req/s | p99 ms | Nest / floor | service / Nest | round-trip floor req/s | service / round trip |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      ({ scenario, service: s, nest: n, floor: f, trip: t, sliceRatio }) =>
        `| ${scenario} | ${fmt(s.rps)} | ${fmt(s.p50)} | ${fmt(s.p99)} | ${fmt(f.rps)} | ${fmt(f.p50)} | ${fmt(f.p99)} | ${fmt(s.rps / f.rps, 2)} | ${fmt(sliceRatio, 2)} ` +
        `| ${fmt(n.rps)} | ${fmt(n.p99)} | ${fmt(n.rps / f.rps, 2)} | ${fmt(s.rps / n.rps, 2)} | ${fmt(t.rps)} | ${fmt(s.rps / t.rps, 2)} |`,
    ),
  ];
  return lines.join('\n');
}

function targets(rows: Row[]): string[] {
  const by = (name: string): Row => rows.find((row) => row.scenario === name) as Row;
  const verdict = (ok: boolean): string => (ok ? 'PASS' : 'FAIL');
  const ratio = (row: Row): number => row.service.rps / row.floor.rps;
  const firstRatio = ratio(by('first page'));
  const qRatio = ratio(by('q search'));
  const deep = by('deep page (200 hops)').service.p99;
  const first = by('first page').service.p99;
  const q = by('q search').service.p99;
  const qFloor = by('q search').floor.p99;
  const qLight = by('q search, 5 connections').service.p99;
  const loaded = rows.filter((row) => !row.scenario.includes('5 connections'));
  const nestShare = Math.max(...loaded.map((row) => row.nest.rps / row.floor.rps));
  const serviceShare = Math.min(...loaded.map((row) => row.service.rps / row.nest.rps));
  const tripShares = loaded.map((row) => row.service.rps / row.trip.rps);
  const [tripShare, tripWorst] = [Math.max(...tripShares), Math.min(...tripShares)];
  return [
    `${verdict(firstRatio >= 2 && qRatio >= 2)}  list first page and q >= 2.0 x the naive floor (first page ${firstRatio.toFixed(3)}, q search ${qRatio.toFixed(3)})`,
    `${verdict(deep <= 1.2 * first)}  deep page p99 within 1.2 x first page p99 (${deep} ms vs ${first} ms = ${(deep / first).toFixed(2)} x)`,
    `${verdict(q < 50)}  q search p99 < 50 ms at full load (${q} ms; the bare floor: ${qFloor} ms; the service at 5 connections: ${qLight} ms)`,
    `info  the bare Nest + Express app reaches ${nestShare.toFixed(2)} of the floor at best, the service ${serviceShare.toFixed(2)} of the bare Nest app at worst`,
    `info  the service reaches ${tripShare.toFixed(2)} of the round-trip floor (SELECT 1, fixed body) at best, ${tripWorst.toFixed(2)} at worst`,
  ];
}

async function main(): Promise<void> {
  const options = readOptions('bench:list', parseOptions);
  const databaseUrl = benchDatabaseUrl();
  await prepareBenchDatabase(databaseUrl, options.reseed, log);
  const machine = await describeMachine(databaseUrl);
  // The service and the three floors keep pools of 20 each.
  await warnIfFewConnections(databaseUrl, 4 * 20 + 2, log);
  const env = serviceEnv(databaseUrl);

  const started: Target[] = [];
  try {
    const service = await startTarget('service', SERVICE_MAIN, env, '/health/live');
    started.push(service);
    const floor = await startTarget('floor', FLOOR_MAIN, env, '/');
    started.push(floor);
    const nest = await startTarget('bare Nest floor', NEST_FLOOR_MAIN, env, '/');
    started.push(nest);
    const trip = await startTarget('round-trip floor', ROUND_TRIP_FLOOR_MAIN, env, '/');
    started.push(trip);

    log(`walking ${options.hops} cursor hops for ${ACCOUNTS.length} accounts on each target`);
    const walkStart = Date.now();
    const deepService = await deepVariants(service, options.hops);
    const deepFloor = await deepVariants(floor, options.hops);
    log(`walked in ${((Date.now() - walkStart) / 1000).toFixed(1)} s`);

    const scenarios: { name: string; service: Variant[]; floor: Variant[]; connections?: number }[] = [
      { name: 'first page', service: perAccount('limit=20'), floor: perAccount('limit=20') },
      { name: 'deep page (200 hops)', service: deepService, floor: deepFloor },
      { name: 'q search', service: qVariants(), floor: qVariants() },
      {
        name: 'status filter',
        service: perAccount('status=approved,rejected'),
        floor: perAccount('status=approved,rejected'),
      },
    ];
    const loadBefore = loadavg()[0] ?? 0;
    log(
      `1-minute load average before the runs: ${loadBefore.toFixed(2)} (includes the cursor walk just done; other work on the machine shows up here too)`,
    );
    const rows: Row[] = [];
    const sliceSeconds = Math.max(1, Math.round(options.duration / options.slices));
    const lowConcurrency = {
      name: 'q search, 5 connections',
      service: qVariants(),
      floor: qVariants(),
      connections: 5,
    };
    for (const scenario of [...scenarios, lowConcurrency]) {
      // The bare Nest floor runs floor-core.ts too, so the floor's cursors are valid on it.
      await checkSameRows(scenario.name, service, [floor, nest], scenario.service, scenario.floor);
      const connections = scenario.connections ?? options.connections;
      const runs: [TargetName, LoadRun][] = [
        ['service', load(service, scenario.service, connections)],
        ['nest', load(nest, scenario.floor, connections)],
        ['floor', load(floor, scenario.floor, connections)],
        ['trip', load(trip, scenario.floor, connections)],
      ];
      const { tallies, perSlice } = await interleave(runs, {
        warmup: options.warmup,
        slices: options.slices,
        sliceSeconds,
      });
      const sliceRatios = perSlice.map((rps) => rps.service / rps.floor);
      const measured = {
        service: tallies.service.measured(),
        nest: tallies.nest.measured(),
        floor: tallies.floor.measured(),
        trip: tallies.trip.measured(),
      };
      for (const [name, m] of Object.entries(measured)) {
        log(
          `${scenario.name} / ${name}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.failures ? `, ${m.failures} FAILED requests` : ''}`,
        );
      }
      log(`${scenario.name}: service / floor per slice ${sliceRatios.map((r) => r.toFixed(2)).join(' ')}`);
      rows.push({ scenario: scenario.name, ...measured, sliceRatio: median(sliceRatios) });
    }

    const failures = rows
      .flatMap((row) => [row.service, row.nest, row.floor, row.trip])
      .reduce((sum, m) => sum + m.failures, 0);
    log('');
    log(
      `Machine: ${machine}; ${options.connections} connections; per scenario and target ${options.warmup} s warm-up, then ${options.slices} slices of ${sliceSeconds} s interleaved with the other targets' (the first ${SETTLE_MS} ms of each left out);`,
    );
    log(
      `autocannon runs in this process, the service and the three floors in their own, all on the same machine as PostgreSQL.`,
    );
    log(`1-minute load average: ${loadBefore.toFixed(2)} before the runs, ${(loadavg()[0] ?? 0).toFixed(2)} after.`);
    log('');
    log(table(rows));
    log('');
    for (const line of targets(rows)) log(line);
    if (failures > 0)
      log(`WARNING: ${failures} requests failed (non-2xx, errors or time-outs); the figures above are suspect`);
    if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, rows }, null, 2) + '\n');
  } catch (error) {
    for (const target of started) {
      const tail = target.output.join('').split('\n').slice(-20).join('\n');
      if (tail.trim()) process.stderr.write(`--- ${target.name} output (last lines) ---\n${tail}\n`);
    }
    throw error;
  } finally {
    for (const target of started.reverse()) await target.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:list failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
