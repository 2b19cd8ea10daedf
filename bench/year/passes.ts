import { dirname, join } from 'node:path';
import { pacedChanges, pacedLoad } from '../harness/loads';
import { Lab, startService } from '../harness/processes';
import { fmt, log } from '../harness/report';
import { benchSecret } from '../harness/service-env';
import { type LoadRun, Measured, Tally, percentile } from '../harness/slices';
import { gateOf } from '../retention/gate';
import type { Arrival } from '../webhooks/receiver';
import { MEDIUM } from './seed';
import type { Side } from './sides';

/** The first pass of each retention setting on a year: what it has to do, counted as the service counts it. */
export const PASSES = {
  'PII_RETENTION_DAYS=180': {
    env: { PII_RETENTION_DAYS: '180', WEBHOOK_EVENT_RETENTION_DAYS: '0' },
    due: `SELECT count(*)::int AS n FROM verifications
           WHERE redacted_at IS NULL AND coalesce(decided_at, updated_at) < now() - interval '180 days'`,
  },
  'WEBHOOK_EVENT_RETENTION_DAYS=90': {
    env: { PII_RETENTION_DAYS: '0', WEBHOOK_EVENT_RETENTION_DAYS: '90' },
    due: `SELECT count(*)::int AS n FROM webhook_events
           WHERE delivery_status IN ('delivered', 'failed') AND created_at < now() - interval '90 days'`,
  },
} as const;
export type PassName = keyof typeof PASSES;

export type PassFigures = {
  due: number;
  done: number;
  seconds: number;
  finished: boolean;
  list: Record<'pass' | 'none', Measured>;
  fresh: Record<'pass' | 'none', number[]>;
};

type Changed = { type: string; data?: { verification?: { id: string; version: number; updated_at: string } } };

/** One slice's loads: another client's list into `tally`, and fresh status changes of the hooked accounts at `during`/s. */
export async function sliceLoads(side: Side, list: LoadRun, tally: Tally, o: { slice: number; during: number }) {
  const [, changes] = await Promise.all([
    list(o.slice, tally),
    pacedChanges(side.client, side.moving, o.during, o.during * o.slice),
  ]);
  return changes;
}

/**
 * Waits for the webhooks of a slice's fresh changes; their commit→arrival in ms, and every other
 * arrival of the window (a backlog's, a pass's redaction webhooks).
 */
export async function freshArrivals(side: Side, changes: Awaited<ReturnType<typeof sliceLoads>>, what: string) {
  const made = new Set(changes.responded.keys());
  /** The arrival's verification when it is the webhook of one of the slice's changes. */
  const freshOf = (a: Arrival) => {
    const body = JSON.parse(a.body) as Changed;
    const v = body.data?.verification;
    return body.type === 'verification.status_changed' && made.has(`${v?.id}:${v?.version}`) ? v : undefined;
  };
  const { arrivals } = await side.receiver.collect(made.size, what, (a) => freshOf(a) !== undefined);
  const [ms, others] = [[] as number[], [] as Arrival[]];
  for (const a of arrivals) {
    const v = freshOf(a);
    if (v) ms.push(a.at - Date.parse(v.updated_at));
    else others.push(a);
  }
  return { ms, others };
}

/**
 * One retention pass on `side`, by a worker of its own (pass-gate.js preloaded: the bench holds its
 * pass between batches; its deliveries go on), in slices of `slice` s of two kinds taking turns: *pass* (the pass goes on) and
 * *none* (it waits). In both, another client's list (a medium account's first page, open loop at
 * `rate`/s) and fresh status changes of the hooked accounts (`during`/s), whose commit→arrival is
 * read off the receiver. Until the pass ends or has run `maxSeconds`.
 */
export async function retentionPass(lab: Lab, side: Side, name: PassName, o: PassOptions): Promise<PassFigures> {
  const count = async (): Promise<number> => (await side.db.query<{ n: number }>(PASSES[name].due)).rows[0]?.n ?? 0;
  const due = await count();
  // --pass-in-api: the pass runs in a process that also serves the API (APP_ROLE=all), and the list is asked of it.
  const env = { ...side.env, ...PASSES[name].env, APP_ROLE: o.inApi ? 'all' : 'worker', LOG_LEVEL: 'info' };
  const retention = { RETENTION_INTERVAL_MS: '100', RETENTION_BUDGET_PERCENT: String(o.budget), PASS_GATE_JOBS: 'off' };
  // --pass-main: another build runs the pass; the gate patches that build's modules.
  const build: { main?: string; env: Record<string, string> } = o.main
    ? { main: o.main, env: { NODE_PATH: join(dirname(o.main), '..') } }
    : { env: {} };
  const gateModule = join(__dirname, '..', 'retention', 'pass-gate.js');
  // In an API process, the pass's process is the only one delivering, as in one APP_ROLE=all deployment.
  if (o.inApi) await side.worker.stop();
  const worker = await lab.start(
    startService(
      `${side.name} ${name}`,
      { ...env, ...retention, ...build.env },
      { nodeArgs: ['--require', gateModule], ipc: true, main: build.main },
    ),
  );
  const gate = gateOf(worker);
  await gate.pause();
  const other = { path: '/api/v1/public/kyc/verifications?limit=20', secret: benchSecret(MEDIUM.first) };
  const list = pacedLoad(o.inApi ? worker.url : side.api.url, [other], o.rate);
  const tallies = { pass: new Tally(), none: new Tally() };
  const fresh = { pass: [] as number[], none: [] as number[] };
  const ended = (): boolean => /retention: redacted \d+ verification/.test(worker.output.join(''));
  // A warm-up, gate closed and not counted: the first slice must not carry the loads' own start (new
  // connections, cold code), which had put a list p99 of 0.7-2.7 s on the first pass slice alone.
  await Promise.all([
    list(o.warmup, new Tally()),
    pacedChanges(side.client, side.moving, o.during, o.during * o.warmup),
  ]);
  let [seconds, round] = [0, 0];
  for (; !ended() && seconds < o.maxSeconds; round++) {
    for (const kind of round % 2 ? (['none', 'pass'] as const) : (['pass', 'none'] as const)) {
      if (kind === 'pass') gate.resume();
      const t0 = performance.now();
      const changes = await sliceLoads(side, list, tallies[kind], o);
      if (kind === 'pass') await gate.pause().then(() => (seconds += (performance.now() - t0) / 1000));
      fresh[kind].push(...(await freshArrivals(side, changes, `${side.name} ${name} ${kind}`)).ms);
    }
    const done = due - (await count());
    log(
      `${side.name} ${name}: round ${round + 1}, ${fmt(done)} of ${fmt(due)} done; list p99 pass / none ${fmt(tallies.pass.measured().p99, 1)} / ${fmt(tallies.none.measured().p99, 1)} ms`,
    );
  }
  const finished = ended();
  gate.resume();
  await worker.stop();
  if (o.inApi) side.worker = await lab.start(startService(`${side.name} worker`, { ...side.env, APP_ROLE: 'worker' }));
  return {
    due,
    done: due - (await count()),
    seconds,
    finished,
    list: { pass: tallies.pass.measured(), none: tallies.none.measured() },
    fresh,
  };
}

export type PassOptions = {
  rate: number;
  slice: number;
  warmup: number;
  maxSeconds: number;
  budget: number;
  during: number;
  inApi: boolean;
  main?: string;
};
export const p99 = (values: number[]): number => percentile(values, 0.99);
