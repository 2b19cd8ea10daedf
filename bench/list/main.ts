/**
 * npm run bench:list — the public list route under load beside the naive floor (floor.ts: bare
 * node:http + pg doing the same database work). Per scenario, in interleaved slices: throughput
 * (closed loop, autocannon) and latency (open loop at a paced rate below saturation), each with
 * the server process's CPU per request. See docs/performance.md.
 *
 * Options: --reseed, --duration <s> (15 per target, cut into --slices <n> (5)), --warmup <s> (3),
 * --connections <n> (50), --rate <n> (200 req/s, the paced latency load), --hops <n> (200), --out <file.json>.
 */
import { join } from 'node:path';
import { describeMachine, warnIfFewConnections } from '../harness/db';
import { parseFlags, positiveInteger, readOptions } from '../harness/flags';
import { BenchProcess, startProcess, startService, tail } from '../harness/processes';
import { BESIDE_FLOOR_HEADER, besideFloor, fmt, footer, load1, log, table, verdict, writeOut } from '../harness/report';
import { benchSecret, serviceEnv } from '../harness/service-env';
import { ApiGet, Measured, autocannonLoad, interleave, median, pacedLoad } from '../harness/slices';
import { ACCOUNTS, LIST_PATH, benchDatabaseUrl, perAccount, qRequests } from './data';
import { prepareBenchDatabase } from './seed';

function parseOptions(argv: string[]) {
  const values = parseFlags(argv, {
    reseed: { type: 'boolean' },
    duration: { type: 'string' },
    slices: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string' },
    rate: { type: 'string' },
    hops: { type: 'string' },
    out: { type: 'string' },
  });
  const [duration, slices] = [positiveInteger(values, 'duration', 15), positiveInteger(values, 'slices', 5)];
  return {
    reseed: values.reseed === true,
    slices,
    sliceSeconds: Math.max(1, Math.round(duration / slices)),
    warmup: positiveInteger(values, 'warmup', 3),
    connections: positiveInteger(values, 'connections', 50),
    rate: positiveInteger(values, 'rate', 200),
    hops: positiveInteger(values, 'hops', 200),
    out: values.out,
  };
}

interface Page {
  data: { id: string }[];
  has_more: boolean;
  next_cursor: string | null;
}

async function getPage(target: BenchProcess, request: ApiGet): Promise<Page> {
  const res = await fetch(`${target.url}${request.path}`, { headers: { authorization: `Bearer ${request.secret}` } });
  if (res.status !== 200) throw new Error(`${target.name} ${request.path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Page;
}

/** The page after `hops` cursor hops, per account, on the target's own cursors. */
async function deepRequests(target: BenchProcess, hops: number): Promise<ApiGet[]> {
  const requests = new Array<ApiGet>(ACCOUNTS.length);
  let next = 0;
  const walker = async (): Promise<void> => {
    for (let i = next++; i < ACCOUNTS.length; i = next++) {
      const secret = benchSecret(ACCOUNTS[i] as number);
      let path = `${LIST_PATH}?limit=20`;
      for (let hop = 0; hop < hops; hop++) {
        const cursor = (await getPage(target, { path, secret })).next_cursor;
        if (!cursor) throw new Error(`account ${i} ran out of pages after ${hop} hops`);
        path = `${LIST_PATH}?limit=20&cursor=${encodeURIComponent(cursor)}`;
      }
      requests[i] = { path, secret };
    }
  };
  await Promise.all(Array.from({ length: 16 }, walker));
  return requests;
}

/** The floor must return the service's rows, or the comparison means nothing. */
async function checkSameRows(scenario: string, service: BenchProcess, floor: BenchProcess, s: ApiGet[], f: ApiGet[]) {
  for (let i = 0; i < Math.min(s.length, 40); i++) {
    const [expected, page] = [await getPage(service, s[i] as ApiGet), await getPage(floor, f[i] as ApiGet)];
    const ids = (p: Page): string => `${p.has_more} ${p.data.map((row) => row.id).join()}`;
    if (ids(expected) !== ids(page))
      throw new Error(`${scenario}: the floor and the service disagree on ${s[i]?.path}`);
  }
}

interface Row {
  scenario: string;
  throughput: { service: Measured; floor: Measured; sliceRatio: number };
  latency: { service: Measured; floor: Measured };
}

async function main(): Promise<void> {
  const options = readOptions('bench:list', parseOptions);
  const databaseUrl = benchDatabaseUrl();
  await prepareBenchDatabase(databaseUrl, options.reseed, log);
  const machine = await describeMachine(databaseUrl);
  await warnIfFewConnections(databaseUrl, 2 * 20 + 2, log);
  const env = serviceEnv(databaseUrl, 'kyc-bench', { APP_ROLE: 'api' });
  const loadAtStart = load1();
  const started: BenchProcess[] = [];
  try {
    const service = await startService('service', env);
    started.push(service);
    const floor = await startProcess('floor', join(__dirname, 'floor.js'), env, { stopGraceMs: 5_000 });
    started.push(floor);
    log(`walking ${options.hops} cursor hops for ${ACCOUNTS.length} accounts on each target`);
    const [deepService, deepFloor] = [
      await deepRequests(service, options.hops),
      await deepRequests(floor, options.hops),
    ];
    const scenarios: [string, ApiGet[], ApiGet[]][] = [
      ['first page', perAccount('limit=20'), perAccount('limit=20')],
      [`deep page (${options.hops} hops)`, deepService, deepFloor],
      ['q search', qRequests(), qRequests()],
      ['status filter', perAccount('status=approved,rejected'), perAccount('status=approved,rejected')],
    ];
    const rows: Row[] = [];
    for (const [scenario, s, f] of scenarios) {
      await checkSameRows(scenario, service, floor, s, f);
      const pids = { service: service.child.pid, floor: floor.child.pid };
      const closed = await interleave(
        [
          { name: 'service', pid: pids.service, run: autocannonLoad(service.url, s, options.connections) },
          { name: 'floor', pid: pids.floor, run: autocannonLoad(floor.url, f, options.connections) },
        ],
        options,
      );
      const paced = await interleave(
        [
          { name: 'service', pid: pids.service, run: pacedLoad(service.url, s, options.rate) },
          { name: 'floor', pid: pids.floor, run: pacedLoad(floor.url, f, options.rate) },
        ],
        options,
      );
      const sliceRatio = median(closed.perSlice.map((x) => x.service.rps / x.floor.rps));
      rows.push({ scenario, throughput: { ...closed.measured, sliceRatio }, latency: paced.measured });
      const { service: t, floor: u } = closed.measured;
      const { service: l, floor: m } = paced.measured;
      log(`${scenario}: ${fmt(t.rps)} vs ${fmt(u.rps)} req/s; at ${options.rate}/s p99 ${l.p99} vs ${m.p99} ms`);
    }
    log();
    log(
      `Throughput: ${options.connections} connections, ${options.warmup} s warm-up, then ${options.slices} interleaved slices of ${options.sliceSeconds} s per target (the first 0.5 s left out).`,
    );
    log(
      table(
        BESIDE_FLOOR_HEADER,
        rows.map((r) => besideFloor(r.scenario, r.throughput.service, r.throughput.floor, r.throughput.sliceRatio)),
      ),
    );
    log();
    log(`Latency: open loop at ${options.rate} req/s, the same slices.`);
    log(
      table(
        [...BESIDE_FLOOR_HEADER.slice(0, 9), 'service / floor p99'],
        rows.map((r) => [
          ...besideFloor(r.scenario, r.latency.service, r.latency.floor, NaN).slice(0, 9),
          fmt(r.latency.service.p99 / r.latency.floor.p99, 2),
        ]),
      ),
    );
    log();
    const by = (name: string): Row => rows.find((row) => row.scenario.startsWith(name)) as Row;
    const ratio = (row: Row): number => row.throughput.service.rps / row.throughput.floor.rps;
    const [first, deep, q] = [by('first page'), by('deep page'), by('q search')];
    log(
      verdict(
        ratio(first) >= 2 && ratio(q) >= 2,
        `list first page and q >= 2.0 x the naive floor (first page ${fmt(ratio(first), 3)}, q ${fmt(ratio(q), 3)})`,
      ),
    );
    log(
      verdict(
        deep.latency.service.p99 <= 1.2 * first.latency.service.p99,
        `deep page p99 within 1.2 x first page p99 at ${options.rate}/s (${deep.latency.service.p99} vs ${first.latency.service.p99} ms)`,
      ),
    );
    log(
      verdict(
        q.latency.service.p99 < 50,
        `q search p99 < 50 ms at ${options.rate}/s (${q.latency.service.p99} ms; the floor ${q.latency.floor.p99} ms)`,
      ),
    );
    const failures = rows.reduce(
      (n, r) =>
        n +
        r.throughput.service.failures +
        r.throughput.floor.failures +
        r.latency.service.failures +
        r.latency.floor.failures,
      0,
    );
    footer(machine, loadAtStart, failures);
    writeOut(options.out, { machine, options, rows });
  } catch (error) {
    for (const p of started) process.stderr.write(`--- ${p.name} (last lines) ---\n${tail(p)}\n`);
    throw error;
  } finally {
    for (const p of started.reverse()) await p.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:list failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
