/**
 * npm run bench:list — the public list route under load beside the naive floor (floor.ts: bare
 * node:http + pg doing the same database work). Per scenario, in interleaved slices: throughput
 * (closed loop, autocannon; the first page also beside the floor's one-SELECT-1-per-request route)
 * and latency (open loop at a paced rate below saturation), each with the CPU per request of the
 * server process and of PostgreSQL; then the first page of a big new account before and after
 * ANALYZE (stale.ts). See docs/performance.md; the options and their defaults are in parseOptions.
 */
import { join } from 'node:path';
import { concurrently } from '../harness/api';
import { warnIfFewConnections } from '../harness/db';
import { SLICE_FLAGS, parseFlags, withSliceSeconds } from '../harness/flags';
import { ApiGet, autocannonLoad, pacedLoad } from '../harness/loads';
import { BenchProcess, runBench, startProcess, startService } from '../harness/processes';
import { besideFloor, besideFloorTable, figures, fmt, footer, log, slicesLine, verdict } from '../harness/report';
import { benchSecret, serviceEnv } from '../harness/service-env';
import { LoadRun, Measured, interleave, median } from '../harness/slices';
import { ACCOUNTS, LIST_PATH, benchDatabaseUrl, perAccount, prepareBenchDatabase, qRequests } from './seed';
import { IMPORT_ROWS, importBigClient } from './stale';

function parseOptions(argv: string[]) {
  const integers = { ...SLICE_FLAGS, connections: 50, rate: 200, hops: 200 };
  return withSliceSeconds(parseFlags(argv, { reseed: { type: 'boolean' } }, integers));
}

type Page = { data: { id: string }[]; has_more: boolean; next_cursor: string | null };

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

type Pair = Record<'service' | 'floor', Measured>;

runBench('bench:list', parseOptions, async (options, lab) => {
  const databaseUrl = benchDatabaseUrl();
  await prepareBenchDatabase(databaseUrl, options.reseed === true);
  await warnIfFewConnections(databaseUrl, 2 * 20 + 2, log);
  const env = serviceEnv(databaseUrl, 'kyc-bench', { APP_ROLE: 'api' });
  const service = await lab.start(startService('service', env));
  const floor = await lab.start(startProcess('floor', join(__dirname, 'floor.js'), env));
  log(`walking ${options.hops} cursor hops for ${ACCOUNTS.length} accounts on each target`);
  const [deepService, deepFloor] = [await deepRequests(service, options.hops), await deepRequests(floor, options.hops)];
  const closed = (url: string, requests: ApiGet[]): LoadRun => autocannonLoad(url, requests, options.connections);
  const paced = (url: string, requests: ApiGet[]): LoadRun => pacedLoad(url, requests, options.rate);
  /** The service on its requests beside the floor on its own. */
  const pair = (load: typeof closed, s: ApiGet[], f: ApiGet[]) =>
    [
      { name: 'service', pid: service.child.pid, run: load(service.url, s) },
      { name: 'floor', pid: floor.child.pid, run: load(floor.url, f) },
    ] as const;
  // The floor process's one SELECT 1 per request, in the first page's throughput slices.
  const select1 = {
    name: 'select1',
    pid: floor.child.pid,
    run: closed(floor.url, [{ path: '/select-1', secret: '' }]),
  };
  const [throughput, latency]: [string[][], string[][]] = [[], []];
  const all: Measured[] = [];
  /** The scenario's throughput (the SELECT 1 too in its slices with `select1`), and its latency (not with `no latency`). */
  const measure = async (scenario: string, s: ApiGet[], f: ApiGet[], extra: '' | 'select1' | 'no latency' = '') => {
    await checkSameRows(scenario, service, floor, s, f);
    const also = extra === 'select1' ? [select1] : [];
    const { measured: t, perSlice } = await interleave([...pair(closed, s, f), ...also], options);
    const sliceRatio = median(perSlice.map((x) => x.service.rps / x.floor.rps));
    throughput.push(besideFloor(scenario, t.service, t.floor, t.service.rps / t.floor.rps, sliceRatio));
    const l = extra !== 'no latency' ? (await interleave(pair(paced, s, f), options)).measured : undefined;
    if (l) latency.push(besideFloor(scenario, l.service, l.floor, l.service.p99 / l.floor.p99));
    all.push(...Object.values<Measured>(t), ...(l ? [l.service, l.floor] : []));
    const line = `${scenario}: ${fmt(t.service.rps)} vs ${fmt(t.floor.rps)} req/s${l ? `; at ${options.rate}/s p99 ${fmt(l.service.p99)} vs ${fmt(l.floor.p99)} ms` : ''}`;
    log(line);
    return { ...t, p99: l ? [l.service.p99, l.floor.p99] : [] } as Pair & { select1?: Measured; p99: number[] };
  };
  const first = await measure('first page', perAccount('limit=20'), perAccount('limit=20'), 'select1');
  const one = first.select1 as Measured;
  const blank = (n: number): string[] => new Array<string>(n).fill('');
  throughput.push(["  the floor's one SELECT 1 per request", ...blank(5), ...figures(one), ...blank(2)]);
  const deep = await measure(`deep page (${options.hops} hops)`, deepService, deepFloor);
  const q = await measure('q search', qRequests(), qRequests());
  await measure('status filter', perAccount('status=approved,rejected'), perAccount('status=approved,rejected'));
  const big = await importBigClient(databaseUrl, lab);
  const [plans, stale]: [string[], Pair[]] = [[], []];
  for (const state of ['before ANALYZE', 'after ANALYZE']) {
    if (stale.length) await big.analyze();
    plans.push(await big.explain(state));
    stale.push(await measure(`first page of the new account, ${state}`, [big.request], [big.request], 'no latency'));
  }
  const [before, after] = stale as [Pair, Pair];
  const ratios = (x: Measured, y: Measured): string[] =>
    (['rps', 'p50', 'p99', 'cpuMs', 'pgCpuMs'] as const).map((k) => fmt(x[k] / y[k], 2));
  const [serviceRatios, floorRatios] = [ratios(before.service, after.service), ratios(before.floor, after.floor)];
  throughput.push(['  before / after', ...serviceRatios, ...floorRatios, ...blank(2)]);

  log();
  log(slicesLine(`Throughput: ${options.connections} connections`, options));
  log(besideFloorTable(['service / floor', 'median slice ratio'], throughput));
  const query = 'SELECT * … WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 21';
  log(`The new account: ${fmt(IMPORT_ROWS)} verifications (the most), imported with autovacuum off on the table.`);
  log(`Its first page, by EXPLAIN ANALYZE of the service's query's equivalent ${query}:`);
  for (const plan of plans) log(`  ${plan}`);
  log();
  log(`Latency: open loop at ${options.rate} req/s, the same slices.`);
  log(besideFloorTable(['service / floor p99'], latency));
  log();
  const ratio = (p: Pair): number => p.service.rps / p.floor.rps;
  const throughputTarget = `list first page and q >= 2.0 x the naive floor (first page ${fmt(ratio(first), 3)}, q ${fmt(ratio(q), 3)})`;
  log(verdict(ratio(first) >= 2 && ratio(q) >= 2, throughputTarget));
  const [deepP99 = NaN, firstP99 = NaN, qP99 = NaN] = [deep.p99[0], first.p99[0], q.p99[0]];
  const deepTarget = `deep page p99 within 1.2 x first page p99 at ${options.rate}/s (${fmt(deepP99, 1)} vs ${fmt(firstP99, 1)} ms)`;
  log(verdict(deepP99 <= 1.2 * firstP99, deepTarget));
  log(
    verdict(
      qP99 < 50,
      `q search p99 < 50 ms at ${options.rate}/s (${fmt(qP99)} ms; the floor ${fmt(q.p99[1] ?? NaN)} ms)`,
    ),
  );
  // CPU per request from the throughput slices (closed loop); PostgreSQL's is all of its processes'.
  const { service: fs, floor: ff } = first;
  const pgTarget = `PostgreSQL CPU per first-page request <= 0.3 ms (${fmt(fs.pgCpuMs, 3)} ms; the floor's ${fmt(ff.pgCpuMs, 3)})`;
  log(verdict(fs.pgCpuMs <= 0.3, pgTarget));
  const cpuTarget = `service CPU per first-page request <= 0.7 ms (${fmt(fs.cpuMs, 3)} ms; the floor process ${fmt(ff.cpuMs, 3)})`;
  log(verdict(fs.cpuMs <= 0.7, cpuTarget));
  const oneRatio = fs.rps / one.rps;
  const oneTarget = `first page req/s >= 0.1 x the one-SELECT-1-per-request floor (${fmt(fs.rps)} vs ${fmt(one.rps)} = ${oneRatio.toPrecision(3)} x)`;
  log(verdict(oneRatio >= 0.1, oneTarget));
  const staleRatio = before.service.rps / after.service.rps;
  const staleTarget = `first page before ANALYZE >= 0.8 x after (${fmt(before.service.rps)} vs ${fmt(after.service.rps)} req/s = ${fmt(staleRatio, 2)} x)`;
  log(verdict(staleRatio >= 0.8, staleTarget));
  const failures = all.reduce((n, m) => n + m.failures, 0);
  await footer(databaseUrl, failures);
});
