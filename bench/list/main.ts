/**
 * npm run bench:list — the public list route under load beside the naive floor (floor.ts: bare
 * node:http + pg doing the same database work). Per scenario, in interleaved slices: throughput
 * (closed loop, autocannon) and latency (open loop at a paced rate below saturation), each with
 * the server process's CPU per request. See docs/performance.md;
 * the options and their defaults are in parseOptions.
 */
import { join } from 'node:path';
import { concurrently } from '../harness/api';
import { describeMachine, warnIfFewConnections } from '../harness/db';
import { parseFlags } from '../harness/flags';
import { ApiGet, autocannonLoad, pacedLoad } from '../harness/loads';
import { BenchProcess, runBench, startProcess, startService } from '../harness/processes';
import {
  BESIDE_FLOOR_HEADER,
  besideFloor,
  fmt,
  footer,
  load1,
  log,
  slicesLine,
  table,
  verdict,
} from '../harness/report';
import { benchSecret, serviceEnv } from '../harness/service-env';
import { LoadRun, Measured, interleave, median } from '../harness/slices';
import { ACCOUNTS, LIST_PATH, benchDatabaseUrl, perAccount, qRequests } from './data';
import { prepareBenchDatabase } from './seed';

function parseOptions(argv: string[]) {
  const integers = { duration: 15, slices: 5, warmup: 3, connections: 50, rate: 200, hops: 200 };
  const values = parseFlags(argv, { reseed: { type: 'boolean' } }, integers);
  return { ...values, sliceSeconds: Math.max(1, Math.round(values.duration / values.slices)) };
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
  await concurrently(ACCOUNTS.length, async (i) => {
    const secret = benchSecret(ACCOUNTS[i] as number);
    let path = `${LIST_PATH}?limit=20`;
    for (let hop = 0; hop < hops; hop++) {
      const cursor = (await getPage(target, { path, secret })).next_cursor;
      if (!cursor) throw new Error(`account ${i} ran out of pages after ${hop} hops`);
      path = `${LIST_PATH}?limit=20&cursor=${encodeURIComponent(cursor)}`;
    }
    requests[i] = { path, secret };
  });
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

runBench('bench:list', parseOptions, async (options, lab) => {
  const databaseUrl = benchDatabaseUrl();
  await prepareBenchDatabase(databaseUrl, options.reseed === true, log);
  const machine = await describeMachine(databaseUrl);
  await warnIfFewConnections(databaseUrl, 2 * 20 + 2, log);
  const env = serviceEnv(databaseUrl, 'kyc-bench', { APP_ROLE: 'api' });
  const loadAtStart = load1();
  const service = await lab.start(startService('service', env));
  const floor = await lab.start(startProcess('floor', join(__dirname, 'floor.js'), env));
  log(`walking ${options.hops} cursor hops for ${ACCOUNTS.length} accounts on each target`);
  const [deepService, deepFloor] = [await deepRequests(service, options.hops), await deepRequests(floor, options.hops)];
  const scenarios: [string, ApiGet[], ApiGet[]][] = [
    ['first page', perAccount('limit=20'), perAccount('limit=20')],
    [`deep page (${options.hops} hops)`, deepService, deepFloor],
    ['q search', qRequests(), qRequests()],
    ['status filter', perAccount('status=approved,rejected'), perAccount('status=approved,rejected')],
  ];
  /** The service on its requests beside the floor on its own. */
  const pair = (load: (url: string, requests: ApiGet[]) => LoadRun, s: ApiGet[], f: ApiGet[]) =>
    [
      { name: 'service', pid: service.child.pid, run: load(service.url, s) },
      { name: 'floor', pid: floor.child.pid, run: load(floor.url, f) },
    ] as const;
  const rows: Row[] = [];
  for (const [scenario, s, f] of scenarios) {
    await checkSameRows(scenario, service, floor, s, f);
    const [closed, paced] = [
      await interleave(
        pair((url, requests) => autocannonLoad(url, requests, options.connections), s, f),
        options,
      ),
      await interleave(
        pair((url, requests) => pacedLoad(url, requests, options.rate), s, f),
        options,
      ),
    ];
    const sliceRatio = median(closed.perSlice.map((x) => x.service.rps / x.floor.rps));
    rows.push({ scenario, throughput: { ...closed.measured, sliceRatio }, latency: paced.measured });
    const { service: t, floor: u } = closed.measured;
    const { service: l, floor: m } = paced.measured;
    log(`${scenario}: ${fmt(t.rps)} vs ${fmt(u.rps)} req/s; at ${options.rate}/s p99 ${l.p99} vs ${m.p99} ms`);
  }
  log();
  log(slicesLine(`Throughput: ${options.connections} connections`, options));
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
  const throughputTarget = `list first page and q >= 2.0 x the naive floor (first page ${fmt(ratio(first), 3)}, q ${fmt(ratio(q), 3)})`;
  log(verdict(ratio(first) >= 2 && ratio(q) >= 2, throughputTarget));
  const deepTarget = `deep page p99 within 1.2 x first page p99 at ${options.rate}/s (${deep.latency.service.p99} vs ${first.latency.service.p99} ms)`;
  log(verdict(deep.latency.service.p99 <= 1.2 * first.latency.service.p99, deepTarget));
  const qTarget = `q search p99 < 50 ms at ${options.rate}/s (${q.latency.service.p99} ms; the floor ${q.latency.floor.p99} ms)`;
  log(verdict(q.latency.service.p99 < 50, qTarget));
  const measured = rows.flatMap((r) => [r.throughput.service, r.throughput.floor, r.latency.service, r.latency.floor]);
  const failures = measured.reduce((n, m) => n + m.failures, 0);
  footer(machine, loadAtStart, failures);
});
