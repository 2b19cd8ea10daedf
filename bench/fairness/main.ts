/**
 * npm run bench:fairness — one account's bulk replay against another's fresh status changes. Account
 * B's commit→arrival latency (its status changes paced at --rate through the internal API, its
 * endpoint answering at once) is measured alone and while account A replays --events failed events
 * to an endpoint that answers after --delay ms, in interleaved slices; the floor is B alone, in the
 * same run. One APP_ROLE=api and one APP_ROLE=worker process with the shipped delivery settings
 * (WEBHOOK_CONCURRENCY 50, WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT 10). See docs/performance.md.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiClient, type BenchVerification, change, createBenchData } from '../harness/api';
import { Client } from 'pg';
import { freshBench } from '../harness/db';
import { parseFlags } from '../harness/flags';
import { pacedChanges } from '../harness/loads';
import { cpuSeconds, type Lab, runBench, startService } from '../harness/processes';
import { fmt, footer, log, table, verdict } from '../harness/report';
import { serviceEnv } from '../harness/service-env';
import { median, percentile } from '../harness/slices';
import { BenchReceiver } from '../webhooks/receiver';

const PREFIX = 'kyc_fairbench';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function parseOptions(argv: string[]) {
  return parseFlags(argv, {}, { rounds: 5, seconds: 10, rate: 20, events: 10_000, delay: 2_000 });
}

/**
 * A's endpoint: answers 500 after `delayMs` (a slow, failing endpoint), so every replayed event is
 * failed again after its two attempts, ready for the next round's replay. Hand-written: 20 lines of
 * node:http with a switchable delay is all it needs.
 */
async function slowEndpoint(lab: Lab) {
  const state = { delayMs: 0, requests: 0 };
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      state.requests++;
      setTimeout(() => res.writeHead(500, { 'content-length': '0' }).end(), state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', 1024, resolve));
  lab.defer(() => new Promise((closed) => server.close(closed).closeAllConnections()));
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/a` };
}

runBench('bench:fairness', parseOptions, async (options, lab) => {
  const databaseUrl = await freshBench(lab, 'BENCH_FAIRNESS_DATABASE_URL', 'kyc_fairness_bench', [PREFIX]);
  const receiver = await BenchReceiver.open(lab);
  const a = await slowEndpoint(lab);
  const env = serviceEnv(databaseUrl, PREFIX, {
    // Two attempts a second apart, so A's events are failed again soon after each replay.
    WEBHOOK_RETRY_SCHEDULE: '1s',
    // The bench replays A's events every round: the hourly redelivery limit is not what it measures.
    REDELIVERIES_PER_HOUR: '0',
  });
  const apiProcess = await lab.start(startService('api', { ...env, APP_ROLE: 'api' }));
  const worker = await lab.start(startService('worker', { ...env, APP_ROLE: 'worker' }));
  const api = apiClient(apiProcess.url, 128);
  lab.defer(() => api.close());
  // Account 0 is A, account 1 is B; 100 verifications each.
  const { secrets, verifications } = await createBenchData(api, 2, 200, (i) => (i === 0 ? a.url : receiver.urlFor(1)));
  const [aVerifications, bVerifications] = [0, 1].map((n) => verifications.filter((v) => v.account === n)) as [
    BenchVerification[],
    BenchVerification[],
  ];
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  lab.defer(() => db.end());
  const aEvents = async (status: string): Promise<number> => {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_events e JOIN accounts a ON a.id = e.account_id
        WHERE a.name = 'Bench 0' AND e.delivery_status = $1`,
      [status],
    );
    return rows[0]?.n ?? NaN;
  };

  log(`A's ${options.events} events: status changes through the API, each failed at A's endpoint (twice, at once)`);
  const perVerification = Math.ceil(options.events / aVerifications.length);
  await Promise.all(
    aVerifications.map(async (v) => {
      for (let i = 0; i < perVerification; i++) await change(api, api, v);
    }),
  );
  const settled = async (what: string): Promise<void> => {
    for (const deadline = Date.now() + 600_000; (await aEvents('pending')) > 0; await sleep(500))
      if (Date.now() > deadline) throw new Error(`A's events still pending after 10 minutes (${what})`);
  };
  await settled('seeding');
  await receiver.collect(0, 'seeding');

  let failures = 0;
  const measureB = async (what: string): Promise<number[]> => {
    const drive = await pacedChanges(api, bVerifications, options.rate, options.rate * options.seconds);
    failures += drive.errors;
    const { arrivals } = await receiver.collect(drive.ok, what);
    type Body = { data: { verification: { updated_at: string } } };
    return arrivals.map(
      (arrival) => arrival.at - Date.parse((JSON.parse(arrival.body) as Body).data.verification.updated_at),
    );
  };
  const alone: number[][] = [];
  const replaying: number[][] = [];
  const replayed: number[] = [];
  const workerCpu: number[] = [];
  for (let r = 0; r < options.rounds; r++) {
    const aloneSlice = async (): Promise<void> => {
      alone.push(await measureB(`round ${r + 1}, alone`));
    };
    const replaySlice = async (): Promise<void> => {
      a.state.delayMs = options.delay;
      const res = await api.request('POST', '/api/v1/public/kyc/webhook-events/redeliver', secrets[0] as string, {
        delivery_status: 'failed',
      });
      if (res.status !== 202) throw new Error(`bulk redeliver: HTTP ${res.status} ${res.body}`);
      replayed.push((JSON.parse(res.body) as { count: number }).count);
      const cpu0 = cpuSeconds(worker.child.pid);
      replaying.push(await measureB(`round ${r + 1}, during A's replay`));
      workerCpu.push((cpuSeconds(worker.child.pid) - cpu0) / options.seconds);
      // A's endpoint fails at once again: its backlog drains before the next slice.
      a.state.delayMs = 0;
      await settled(`round ${r + 1}`);
    };
    for (const slice of r % 2 ? [replaySlice, aloneSlice] : [aloneSlice, replaySlice]) await slice();
    const [p, q] = [percentile(alone[r] ?? [], 0.99), percentile(replaying[r] ?? [], 0.99)];
    log(
      `round ${r + 1}: B's p99 alone ${fmt(p)} ms, during A's replay of ${fmt(replayed[r] ?? NaN)} events ${fmt(q)} ms`,
    );
  }

  const all = (slices: number[][]): number[] => slices.flat();
  const p = (values: number[]): string => [0.5, 0.95, 0.99].map((q) => fmt(percentile(values, q))).join(' / ');
  const ratio = percentile(all(replaying), 0.99) / percentile(all(alone), 0.99);
  log();
  log(
    `${options.rounds} rounds, the order alternating: B's status changes at ${options.rate}/s for ${options.seconds} s alone, ` +
      `and for ${options.seconds} s from A's bulk replay of its failed events to an endpoint answering 500 after ${options.delay} ms.`,
  );
  const rows = [
    ["B's commit→arrival alone (floor), p50 / p95 / p99 ms", p(all(alone))],
    ["B's commit→arrival during A's replay, p50 / p95 / p99 ms", p(all(replaying))],
    ['p99 during / alone, all samples', fmt(ratio, 2)],
    [
      '  median of the rounds',
      fmt(median(replaying.map((s, i) => percentile(s, 0.99) / percentile(alone[i] ?? [], 0.99))), 2),
    ],
    ["A's events replayed per round (median)", fmt(median(replayed))],
    ["A's attempts during the run (its endpoint's count)", fmt(a.state.requests)],
    ['worker CPU during a replay slice, % of a core (median)', fmt(median(workerCpu) * 100)],
    ["B's webhooks measured, alone / during", `${all(alone).length} / ${all(replaying).length}`],
  ];
  log(table(['measure', 'value'], rows));
  log();
  log(verdict(ratio <= 1.5, `B's p99 during A's replay within 1.5 x of alone (${fmt(ratio, 2)} x)`));
  await footer(databaseUrl, failures);
});
