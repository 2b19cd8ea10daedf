/**
 * npm run bench:webhooks — status changes through the internal API and the webhooks the worker
 * delivers for them, end to end (one APP_ROLE=api and one APP_ROLE=worker process, as
 * docker-compose.yml deploys), beside a plain Bull queue delivering the same signed body (floor.ts).
 * Throughput: rounds of interleaved slices, the service's (closed-loop changes, deliveries/s to the
 * last arrival) and the floor's (--jobs pre-fed jobs); then latency: changes open loop at --rate,
 * commit→arrival; then a backlog of --backlog events with no queue job (what a Redis outage
 * leaves), drained by the relay, its rate beside the service's steady one, and, while it drains,
 * --during changes/s for --duringSeconds s whose commit→arrival shows whether a client's fresh
 * change waits behind the backlog. See docs/performance.md;
 * the options and their defaults are in parseOptions.
 */
import { join } from 'node:path';
import { Client } from 'pg';
import { apiClient, createBenchData } from '../harness/api';
import { freshBench } from '../harness/db';
import { parseFlags } from '../harness/flags';
import { changeLoop, pacedChanges } from '../harness/loads';
import { cpuSeconds, runBench, startProcess, startService } from '../harness/processes';
import { fmt, footer, log, table, verdict } from '../harness/report';
import { REDIS_URL, serviceEnv } from '../harness/service-env';
import { Tally, median, percentile } from '../harness/slices';
import type { FloorSlice } from './floor';
import { Arrival, BenchReceiver, verifySample } from './receiver';

const PREFIXES = ['kyc_whbench', 'kyc_whbench_floor'];

function parseOptions(argv: string[]) {
  const rounds = { rounds: 5, seconds: 4, jobs: 2_000, connections: 50, concurrency: 50 };
  // Then the paced latency phase; and the data both run on.
  const backlog = { backlog: 20_000, during: 20, duringSeconds: 5 };
  return parseFlags(argv, {}, { ...rounds, rate: 200, paced: 20, accounts: 50, verifications: 1_000, ...backlog });
}

runBench('bench:webhooks', parseOptions, async (options, lab) => {
  const databaseUrl = await freshBench(lab, 'BENCH_WEBHOOKS_DATABASE_URL', 'kyc_webhooks_bench', PREFIXES);
  const receiver = await BenchReceiver.open(lab);
  const env = serviceEnv(databaseUrl, PREFIXES[0] as string, { WEBHOOK_CONCURRENCY: String(options.concurrency) });
  const apiProcess = await lab.start(startService('api', { ...env, APP_ROLE: 'api' }));
  const worker = await lab.start(startService('worker', { ...env, APP_ROLE: 'worker' }));
  const api = apiClient(apiProcess.url, Math.max(options.connections, 64));
  lab.defer(() => api.close());
  const { secrets, verifications } = await createBenchData(
    api,
    options.accounts,
    options.verifications,
    receiver.urlFor,
  );
  let [checked, badSignatures, missing, failures] = [0, 0, 0, 0];
  const take = async (expected: number, what: string): Promise<Arrival[]> => {
    const got = await receiver.collect(expected, what);
    const [c, bad] = verifySample(got.arrivals, secrets);
    [checked, badSignatures, missing] = [checked + c, badSignatures + bad, missing + got.missing];
    return got.arrivals;
  };
  const loop = changeLoop(api, api, verifications, options.connections);
  await loop.run(2, new Tally());
  const sample = (await take(loop.committed, 'warm-up'))[0]?.body;
  if (!sample) throw new Error('no webhook arrived during the warm-up');
  // The floor posts the sample as account 0, to its URL and signed with its secret.
  const floorEnv = {
    REDIS_URL,
    FLOOR_QUEUE_PREFIX: PREFIXES[1] as string,
    FLOOR_CONCURRENCY: String(options.concurrency),
    FLOOR_TARGET_URL: receiver.urlFor(0),
    FLOOR_BODY: sample,
    FLOOR_SECRET: secrets[0] as string,
  };
  const floor = (await lab.start(startProcess('floor', join(__dirname, 'floor.js'), floorEnv, { ipc: true }))).child;
  /** One slice of the floor, up between slices: one IPC round trip. */
  const runFloor = (jobs: number): Promise<FloorSlice> =>
    new Promise((resolve) => void (floor.once('message', resolve), floor.send({ jobs })));
  failures += (await runFloor(options.jobs)).failures;
  await take(options.jobs, 'floor warm-up');

  type Round = Record<'transitions' | 'service' | 'floor' | 'serviceCpu' | 'floorCpu', number>;
  const rounds: Round[] = [];
  const cpu = (pids: (number | undefined)[]): number => pids.reduce<number>((sum, pid) => sum + cpuSeconds(pid), 0);
  const [servicePids, floorPids] = [[apiProcess.child.pid, worker.child.pid], [floor.pid]];
  /** Deliveries/s from `t0` to the last arrival. */
  const rate = (arrivals: Arrival[], t0: number): number =>
    arrivals.length / ((Math.max(...arrivals.map((a) => a.at)) - t0) / 1000);
  for (let r = 0; r < options.rounds; r++) {
    const round: Partial<Round> = {};
    const serviceSlice = async (): Promise<void> => {
      const [from, cpu0, t0, tally] = [loop.committed, cpu(servicePids), Date.now(), new Tally()];
      await loop.run(options.seconds, tally);
      const arrivals = await take(loop.committed - from, `round ${r + 1}`);
      failures += tally.failures;
      round.transitions = (loop.committed - from) / ((Date.now() - t0) / 1000);
      [round.service, round.serviceCpu] = [rate(arrivals, t0), ((cpu(servicePids) - cpu0) / arrivals.length) * 1e6];
    };
    const floorSlice = async (): Promise<void> => {
      const cpu0 = cpu(floorPids);
      const result = await runFloor(options.jobs);
      const arrivals = await take(result.delivered, `floor round ${r + 1}`);
      failures += result.failures;
      [round.floor, round.floorCpu] = [
        rate(arrivals, result.started),
        ((cpu(floorPids) - cpu0) / arrivals.length) * 1e6,
      ];
    };
    for (const slice of r % 2 ? [floorSlice, serviceSlice] : [serviceSlice, floorSlice]) await slice();
    const { service = NaN, transitions = NaN, floor: floorRate = NaN } = round;
    rounds.push(round as Round);
    const line = `round ${r + 1}: service ${fmt(service)} deliveries/s (changes ${fmt(transitions)}/s), floor ${fmt(floorRate)}/s`;
    log(line);
  }

  log(`latency: ${options.rate * options.paced} changes at ${options.rate}/s, open loop`);
  const drive = await pacedChanges(api, verifications, options.rate, options.rate * options.paced);
  failures += drive.errors;
  const commitToArrival: number[] = [];
  const responseToArrival: number[] = [];
  for (const arrival of await take(drive.ok, 'latency')) {
    type Body = { data: { verification: { id: string; version: number; updated_at: string } } };
    const v = (JSON.parse(arrival.body) as Body).data.verification;
    commitToArrival.push(arrival.at - Date.parse(v.updated_at));
    const responded = drive.responded.get(`${v.id}:${v.version}`);
    if (responded !== undefined) responseToArrival.push(arrival.at - responded);
  }
  // A backlog of events with no queue job, as a Redis outage leaves it: the relay drains it.
  log(`backlog: ${options.backlog} pending events without a job, over every account, drained by the relay`);
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const perAccount = Math.ceil(options.backlog / options.accounts);
  await db.query(
    `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
     SELECT gen_random_uuid(), a.id, gen_random_uuid(), 'verification.status_changed', $1,
            now() - interval '1 minute', 'pending', now() - interval '1 minute' + n * interval '1 microsecond'
       FROM generate_series(1, $2) AS n CROSS JOIN accounts a`,
    [sample, perAccount],
  );
  await db.end();
  const drainStart = Date.now();
  // Fresh changes while it drains: from its first arrival on, paced well below what the API takes.
  while (receiver.count === 0 && Date.now() - drainStart < 60_000) await new Promise((r) => setTimeout(r, 20));
  const fresh = await pacedChanges(api, verifications, options.during, options.during * options.duringSeconds);
  failures += fresh.errors;
  const all = await take(perAccount * options.accounts + fresh.ok, 'backlog');
  type Changed = { data: { verification: { id: string; version: number; updated_at: string } } };
  const changedOf = (arrival: Arrival) => (JSON.parse(arrival.body) as Changed).data.verification;
  const isFresh = (arrival: Arrival) => arrival.body !== sample;
  const drained = all.filter((arrival) => !isFresh(arrival));
  const freshLatency = all.filter(isFresh).map((arrival) => arrival.at - Date.parse(changedOf(arrival).updated_at));
  const arrivalTimes = drained.map((arrival) => arrival.at).sort((a, b) => a - b);
  const [first, last] = [arrivalTimes[0] ?? NaN, arrivalTimes[arrivalTimes.length - 1] ?? NaN];
  const drainRate = drained.length / ((last - first) / 1000);
  const p = (values: number[]): string => [0.5, 0.95, 0.99].map((q) => fmt(percentile(values, q))).join(' / ');
  const m = (key: keyof Round): number => median(rounds.map((round) => round[key]));
  const ratio = m('service') / m('floor');
  const keepUp = m('service') / m('transitions');
  log();
  const setup = `${options.rounds} rounds, the order alternating: the service's ${options.seconds} s of changes at ${options.connections} connections (WEBHOOK_CONCURRENCY=${options.concurrency}), the floor's ${options.jobs} jobs.`;
  log(setup);
  const rows = [
    ['service deliveries/s (changes through the API, to the last arrival)', fmt(m('service'))],
    ['  API status changes/s in those slices', fmt(m('transitions'))],
    ['  CPU µs per delivery, api + worker processes', fmt(m('serviceCpu'))],
    ['plain-Bull floor deliveries/s', fmt(m('floor'))],
    ['  CPU µs per delivery, floor process', fmt(m('floorCpu'))],
    ['service / floor', fmt(ratio, 2)],
    [`commit→arrival at ${options.rate} changes/s, p50 / p95 / p99 ms`, p(commitToArrival)],
    ['  response→arrival, p50 / p95 / p99 ms', p(responseToArrival)],
    [`backlog of ${drained.length} relayed: deliveries/s from its first arrival to its last`, fmt(drainRate)],
    ['  seconds from the insert to the first arrival (the next sweep)', fmt((first - drainStart) / 1000, 1)],
    [`  fresh changes at ${options.during}/s while it drains: commit→arrival p50 / p95 / p99 ms`, p(freshLatency)],
    ['signatures verified with standardwebhooks (sample)', `${checked - badSignatures}/${checked}`],
  ];
  log(table(['measure (median of the rounds)', 'value'], rows));
  log();
  const throughputTarget = `sustained deliveries/s >= 0.5 x plain-Bull floor (${fmt(m('service'))} vs ${fmt(m('floor'))} = ${fmt(ratio, 2)} x)`;
  log(verdict(ratio >= 0.5, throughputTarget));
  log(verdict(keepUp >= 0.9, `deliveries keep up with transitions (>= 0.9: ${fmt(keepUp, 2)})`));
  const latencyTarget = `p99 commit→arrival < 250 ms at ${options.rate} changes/s (${fmt(percentile(commitToArrival, 0.99))} ms)`;
  log(verdict(percentile(commitToArrival, 0.99) < 250, latencyTarget));
  const drainTarget = `a backlog drains at >= 0.8 x steady deliveries/s (${fmt(drainRate)} vs ${fmt(m('service'))} = ${fmt(drainRate / m('service'), 2)} x)`;
  log(verdict(drainRate >= 0.8 * m('service'), drainTarget));
  const freshTarget = `p99 commit→arrival of fresh changes while the backlog drains < 250 ms (${fmt(percentile(freshLatency, 0.99))} ms, ${freshLatency.length} changes)`;
  log(verdict(percentile(freshLatency, 0.99) < 250, freshTarget));
  if (missing + badSignatures > 0)
    log(`WARNING: ${missing} webhooks missing, ${badSignatures} bad signatures; the figures are suspect`);
  await footer(databaseUrl, failures);
});
