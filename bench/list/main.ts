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
import { parseFlags } from '../harness/flags';
import { ApiGet, autocannonLoad, pacedLoad } from '../harness/loads';
import { BenchProcess, runBench, startProcess, startService } from '../harness/processes';
import { besideFloor, besideFloorHeader, figures, fmt, footer, log, slicesLine, table } from '../harness/report';
import { verdict } from '../harness/report';
import { benchSecret, serviceEnv } from '../harness/service-env';
import { LoadRun, Measured, interleave, median } from '../harness/slices';
import { ACCOUNTS, LIST_PATH, benchDatabaseUrl, perAccount, qRequests } from './data';
import { prepareBenchDatabase } from './seed';
import { IMPORT_ROWS, importBigClient } from './stale';

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

type Pair = Record<'service' | 'floor', Measured>;
interface Row {
  scenario: string;
  throughput: Pair & { sliceRatio: number };
  latency: Pair;
}

/** Each figure of `x` over `y`'s: req/s, p50, p99, CPU and PostgreSQL CPU per request. */
const ratios = (x: Measured, y: Measured): string[] =>
  (['rps', 'p50', 'p99', 'cpuMs', 'pgCpuMs'] as const).map((k) => fmt(x[k] / y[k], 2));

runBench('bench:list', parseOptions, async (options, lab) => {
  const databaseUrl = benchDatabaseUrl();
  await prepareBenchDatabase(databaseUrl, options.reseed === true, log);
  await warnIfFewConnections(databaseUrl, 2 * 20 + 2, log);
  const env = serviceEnv(databaseUrl, 'kyc-bench', { APP_ROLE: 'api' });
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
  } as const;
  const rows: Row[] = [];
  let floorOfAll: Measured | undefined;
  for (const [scenario, s, f] of scenarios) {
    await checkSameRows(scenario, service, floor, s, f);
    const first = scenario === 'first page';
    const throughput = await interleave([...pair(closed, s, f), ...(first ? [select1] : [])], options);
    const latency = (await interleave(pair(paced, s, f), options)).measured;
    const sliceRatio = median(throughput.perSlice.map((x) => x.service.rps / x.floor.rps));
    rows.push({ scenario, throughput: { ...throughput.measured, sliceRatio }, latency });
    if (first) floorOfAll = throughput.measured.select1;
    const [t, l] = [throughput.measured, latency];
    log(
      `${scenario}: ${fmt(t.service.rps)} vs ${fmt(t.floor.rps)} req/s; at ${options.rate}/s p99 ${l.service.p99} vs ${l.floor.p99} ms`,
    );
  }
  const big = await importBigClient(databaseUrl, lab, log);
  const stale: Partial<Record<'before' | 'after', Pair & { plan: string }>> = {};
  for (const state of ['before', 'after'] as const) {
    if (state === 'after') await big.analyze();
    const plan = await big.explain(`${state} ANALYZE`);
    log(plan);
    await checkSameRows(`first page ${state} ANALYZE`, service, floor, [big.request], [big.request]);
    stale[state] = { ...(await interleave(pair(closed, [big.request], [big.request]), options)).measured, plan };
  }
  const [before, after] = [stale.before as Pair & { plan: string }, stale.after as Pair & { plan: string }];
  const select1Figures = floorOfAll as Measured;

  log();
  log(slicesLine(`Throughput: ${options.connections} connections`, options));
  const throughputRow = ({ scenario, throughput: t }: Row): string[] =>
    besideFloor(scenario, t.service, t.floor, t.service.rps / t.floor.rps, t.sliceRatio);
  log(table(besideFloorHeader('service / floor', 'median slice ratio'), rows.map(throughputRow)));
  const [rps, p50, p99, cpu, pgCpu] = figures(select1Figures);
  log(
    `One SELECT 1 per request (the floor process's GET /select-1, in the first page's slices): ${rps} req/s, p50 ${p50} ms, p99 ${p99} ms, floor CPU ${cpu} ms/req, PG CPU ${pgCpu} ms/req.`,
  );
  log();
  log(`Latency: open loop at ${options.rate} req/s, the same slices.`);
  const latencyRow = ({ scenario, latency: l }: Row): string[] =>
    besideFloor(scenario, l.service, l.floor, l.service.p99 / l.floor.p99);
  log(table(besideFloorHeader('service / floor p99'), rows.map(latencyRow)));
  log();
  log(
    `Stale statistics: the first page of a new account of ${fmt(IMPORT_ROWS)} verifications (more than any other), before and after ANALYZE, throughput as above. The plans (EXPLAIN ANALYZE of the equivalent SELECT … WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT 21):`,
  );
  for (const { plan } of [before, after]) log(`  ${plan}`);
  log(
    table(besideFloorHeader('service / floor'), [
      besideFloor('before ANALYZE', before.service, before.floor),
      besideFloor('after ANALYZE', after.service, after.floor),
      ['before / after', ...ratios(before.service, after.service), ...ratios(before.floor, after.floor), ''],
    ]),
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
  // CPU per request from the throughput slices (closed loop): PostgreSQL's is all of its processes'.
  const { service: fs, floor: ff } = first.throughput;
  const pgTarget = `PostgreSQL CPU per first-page request <= 0.3 ms (${fmt(fs.pgCpuMs, 3)} ms; the floor's ${fmt(ff.pgCpuMs, 3)})`;
  log(verdict(fs.pgCpuMs <= 0.3, pgTarget));
  const cpuTarget = `service CPU per first-page request <= 0.7 ms (${fmt(fs.cpuMs, 3)} ms; the floor process ${fmt(ff.cpuMs, 3)})`;
  log(verdict(fs.cpuMs <= 0.7, cpuTarget));
  const select1Ratio = fs.rps / select1Figures.rps;
  const select1Target = `first page req/s >= 0.1 x the one-SELECT-1-per-request floor (${fmt(fs.rps)} vs ${fmt(select1Figures.rps)} = ${select1Ratio.toPrecision(3)} x)`;
  log(verdict(select1Ratio >= 0.1, select1Target));
  const staleRatio = before.service.rps / after.service.rps;
  const staleTarget = `first page before ANALYZE >= 0.8 x after (${fmt(before.service.rps)} vs ${fmt(after.service.rps)} req/s = ${fmt(staleRatio, 2)} x)`;
  log(verdict(staleRatio >= 0.8, staleTarget));
  const measured = [
    ...rows.flatMap((r) => [r.throughput.service, r.throughput.floor, r.latency.service, r.latency.floor]),
    ...[before, after].flatMap((m) => [m.service, m.floor]),
    select1Figures,
  ];
  await footer(
    databaseUrl,
    measured.reduce((n, m) => n + m.failures, 0),
  );
});
