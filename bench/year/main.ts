/**
 * npm run bench:year — the service on a year of data beside the same service on a small database
 * of the same shape, both seeded by SQL (seed.ts) and served side by side (sides.ts: an api and a
 * worker process each). Each figure is taken on both in the same run and printed as big, small and
 * big ÷ small: every public route and filter, paced, in interleaved slices (routes.ts); the
 * background statements at idle; status changes and their webhooks; the drain of a Redis outage's
 * backlog against the steady delivery rate (phases.ts), and another client's list and fresh changes
 * while a backlog drains against the same without one (drain-reads.ts); then each retention setting's
 * first pass on the year, with another client's list and fresh status changes during it against the
 * same without it (passes.ts). See docs/performance.md; the options and their defaults are in parseOptions.
 */
import { DEFAULT_RETENTION_BUDGET_PERCENT } from 'src/config/app-config';
import { warnIfFewConnections } from '../harness/db';
import { FlagError, parseFlags } from '../harness/flags';
import { pacedLoad } from '../harness/loads';
import { runBench } from '../harness/processes';
import { fmt, footer, log, table, verdict } from '../harness/report';
import { interleave } from '../harness/slices';
import { MigrationFigures, checkMigrations } from './migrations';
import { drainReads } from './drain-reads';
import { changeRounds, drainBacklog, idleCost } from './phases';
import { PASSES, PassName, p99, retentionPass } from './passes';
import { routesOf } from './routes';
import { openSide } from './sides';

/** `pii-pass` and `event-pass` are the two halves of `passes`, to skip one of them. */
const PHASES = ['migrations', 'routes', 'idle', 'changes', 'drain', 'passes', 'pii-pass', 'event-pass'] as const;

function parseOptions(argv: string[]) {
  const data = { verifications: 5_000_000, small: 100_000, accounts: 2_000 };
  const routes = { rate: 100, warmup: 2, slices: 3, slice: 3, idle: 60 };
  const changes = { rounds: 3, seconds: 4, connections: 50, backlog: 20_000 };
  const passes = { 'pass-seconds': 120, budget: DEFAULT_RETENTION_BUDGET_PERCENT, during: 20 };
  const flags = {
    reuse: { type: 'boolean' },
    'keep-database': { type: 'boolean' },
    'pass-in-api': { type: 'boolean' },
    'pass-main': { type: 'string' },
    skip: { type: 'string', multiple: true },
  } as const;
  const values = parseFlags(argv, flags, { ...data, ...routes, ...changes, ...passes });
  if (values.small >= values.verifications) throw new FlagError('--small needs fewer rows than --verifications');
  if (values.budget > 100) throw new FlagError('--budget is RETENTION_BUDGET_PERCENT: 1 to 100');
  const unknown = (values.skip ?? []).find((phase) => !(PHASES as readonly string[]).includes(phase));
  if (unknown !== undefined) throw new FlagError(`--skip takes ${PHASES.join(', ')}, not "${unknown}"`);
  return values;
}

runBench('bench:year', parseOptions, async (o, lab) => {
  const runs = (phase: (typeof PHASES)[number]): boolean => !(o.skip ?? []).includes(phase);
  const smallAccounts = Math.max(1, Math.round((o.accounts * o.small) / o.verifications));
  let migrations: MigrationFigures[] = [];
  const checkOnBig = async (url: string): Promise<void> => void (migrations = await checkMigrations(url));
  const big = await openSide(lab, 'big', o.verifications, o.accounts, o, runs('migrations') ? checkOnBig : undefined);
  const small = await openSide(lab, 'small', o.small, smallAccounts, o);
  await warnIfFewConnections(big.databaseUrl, 40, log);
  const sides = [big, small];
  const ratioCells = (b: number, s: number, digits = 1): string[] => [fmt(b, digits), fmt(s, digits), fmt(b / s, 2)];
  let failures = 0;
  const verdicts: string[] = [];

  if (runs('migrations')) {
    log();
    log(
      `This release's migrations applied one at a time to the year (undone first), with probes of the release before's reads and status changes beside them, each every 50 ms on a connection of its own:`,
    );
    const rows = migrations.map(({ name, seconds, waits }) => {
      const [probe, ms] = Object.entries(waits).reduce((a, b) => (b[1] > a[1] ? b : a));
      return [name, fmt(seconds, 1), fmt(ms), probe];
    });
    log(table(['migration', 'seconds', 'longest probe wait ms', 'probe'], rows));
    const worst = Math.max(...migrations.flatMap((m) => Object.values(m.waits)));
    verdicts.push(
      verdict(worst < 1000, `no migration stops reads or status changes for 1 s (longest wait ${fmt(worst)} ms)`),
    );
  }

  if (runs('routes')) {
    const [bigRoutes, smallRoutes] = [await routesOf(big.db, big.client), await routesOf(small.db, small.client)];
    const rows: string[][] = [];
    let [worst, worstLabel, routeFailures] = [0, '', 0];
    for (const [label, requests] of bigRoutes) {
      const slices = { warmup: o.warmup, slices: o.slices, sliceSeconds: o.slice };
      const { measured: m } = await interleave(
        [
          { name: 'big', pid: big.api.child.pid, run: pacedLoad(big.api.url, requests, o.rate) },
          {
            name: 'small',
            pid: small.api.child.pid,
            run: pacedLoad(small.api.url, smallRoutes.get(label) ?? [], o.rate),
          },
        ],
        slices,
      );
      const ratio = m.big.p99 / m.small.p99;
      if (ratio > worst) [worst, worstLabel] = [ratio, label];
      routeFailures += m.big.failures + m.small.failures;
      rows.push([
        label,
        fmt(m.big.p50, 1),
        ...ratioCells(m.big.p99, m.small.p99),
        fmt(m.big.failures + m.small.failures),
      ]);
      log(`${label}: p99 ${fmt(m.big.p99, 1)} vs ${fmt(m.small.p99, 1)} ms`);
    }
    log();
    log(
      `Public routes as the big account asks them, paced at ${o.rate}/s, ${o.warmup} s warm-up, then ${o.slices} interleaved slices of ${o.slice} s per database:`,
    );
    log(table(['route', 'big p50 ms', 'big p99 ms', 'small p99 ms', 'big ÷ small', 'non-2xx'], rows));
    verdicts.push(
      verdict(
        worst <= 1.5,
        `every route's p99 within 1.5 x the small database's (worst: ${worstLabel}, ${fmt(worst, 2)} x)`,
      ),
    );
    verdicts.push(verdict(routeFailures === 0, `no route answered other than 2xx (${routeFailures})`));
    failures += routeFailures;
  }

  if (runs('idle')) {
    const [b, s] = await idleCost(sides, o.idle);
    log();
    log(`Idle: both services up, nobody calling, ${o.idle} s (pg_stat_database):`);
    const rows = [
      ['PostgreSQL statement time, ms per minute', ...ratioCells(b?.msPerMinute ?? NaN, s?.msPerMinute ?? NaN)],
      ['transactions per minute', ...ratioCells(b?.transactionsPerMinute ?? NaN, s?.transactionsPerMinute ?? NaN)],
    ];
    log(table(['idle', 'big', 'small', 'big ÷ small'], rows));
    const [bMs, sMs] = [b?.msPerMinute ?? NaN, s?.msPerMinute ?? NaN];
    verdicts.push(verdict(bMs <= 1.5 * sMs, `idle statement time flat (${fmt(bMs, 1)} vs ${fmt(sMs, 1)} ms/min)`));
  }

  let steady = [NaN, NaN];
  if (runs('changes') || runs('drain')) {
    const rounds = await changeRounds(sides, { rounds: o.rounds, seconds: o.seconds, connections: o.connections });
    failures += rounds.failures;
    const [b, s] = rounds.steady;
    steady = [b?.deliveries ?? NaN, s?.deliveries ?? NaN];
    log();
    log(
      `Status changes of ${big.moving.length} / ${small.moving.length} verifications, closed loop at ${o.connections} connections, ${o.rounds} rounds of ${o.seconds} s per database (medians):`,
    );
    const rows = [
      ['status changes/s', ...ratioCells(b?.changes ?? NaN, s?.changes ?? NaN, 0)],
      ['webhooks delivered/s, to the last arrival', ...ratioCells(b?.deliveries ?? NaN, s?.deliveries ?? NaN, 0)],
      ['webhooks ÷ changes', ...ratioCells(b?.keepUp ?? NaN, s?.keepUp ?? NaN, 3)],
    ];
    log(table(['status changes', 'big', 'small', 'big ÷ small'], rows));
    const ok = (b?.keepUp ?? 0) >= 0.99 && (s?.keepUp ?? 0) >= 0.99;
    verdicts.push(
      verdict(ok, `webhooks keep up with status changes (${fmt(b?.keepUp ?? NaN, 3)}, ${fmt(s?.keepUp ?? NaN, 3)})`),
    );
  }

  if (runs('drain')) {
    const drained = [];
    for (const side of sides) drained.push(await drainBacklog(side, o.backlog));
    const [b, s] = drained;
    failures += (b?.missing ?? 0) + (s?.missing ?? 0);
    log();
    log(
      `A backlog of ${fmt(o.backlog)} pending events without a queue job (a Redis outage), over ${big.hooked.length} accounts:`,
    );
    const rows = [
      ['drained/s, first arrival to last', ...ratioCells(b?.rate ?? NaN, s?.rate ?? NaN, 0)],
      [
        '÷ steady deliveries/s',
        ...ratioCells((b?.rate ?? NaN) / (steady[0] ?? NaN), (s?.rate ?? NaN) / (steady[1] ?? NaN), 2),
      ],
    ];
    log(table(['backlog', 'big', 'small', 'big ÷ small'], rows));
    const bigShare = (b?.rate ?? 0) / (steady[0] ?? NaN);
    verdicts.push(
      verdict(bigShare >= 0.8, `a backlog drains at >= 0.8 x steady delivery on a year (${fmt(bigShare, 2)} x)`),
    );
    const options = { rate: o.rate, slice: o.slice, slices: o.slices, warmup: o.warmup, during: o.during };
    const r = await drainReads(big, steady[0] ?? NaN, options);
    failures += r.list.drain.failures + r.list.none.failures;
    const [listRatio, freshP99] = [r.list.drain.p99 / r.list.none.p99, p99(r.fresh.drain)];
    log();
    log(
      `On the year, slices of ${o.slice} s with a backlog of ${fmt(r.backlog)} draining and with nothing pending, taking turns (the backlog still draining when ${r.outlasted} of ${o.slices} drain slices ended); another client's list at ${o.rate}/s, fresh changes at ${o.during}/s:`,
    );
    const during = [
      ["another client's list p99 ms", ...ratioCells(r.list.drain.p99, r.list.none.p99)],
      ['fresh commit→arrival p99 ms', ...ratioCells(freshP99, p99(r.fresh.none), 0)],
      [
        "the bench's own event-loop delay, worst slice's p99 ms",
        ...ratioCells(r.benchLoop.drain.p99, r.benchLoop.none.p99),
      ],
      ["the bench's own event-loop delay max ms", ...ratioCells(r.benchLoop.drain.max, r.benchLoop.none.max)],
    ];
    log(table(['while a backlog drains', 'draining', 'nothing pending', 'draining ÷ not'], during));
    verdicts.push(
      verdict(
        listRatio <= 1.5,
        `another client's list p99 within 1.5 x while a backlog drains (${fmt(listRatio, 2)} x)`,
      ),
    );
    verdicts.push(
      verdict(
        freshP99 < 250,
        `fresh changes' commit→arrival p99 < 250 ms while a backlog drains (${fmt(freshP99)} ms)`,
      ),
    );
  }

  if (runs('passes')) {
    const rows: string[][] = [];
    const passNames = (Object.keys(PASSES) as PassName[]).filter((name) =>
      runs(name.startsWith('PII') ? 'pii-pass' : 'event-pass'),
    );
    for (const name of passNames) {
      const options = {
        rate: o.rate,
        slice: o.slice,
        warmup: o.warmup,
        maxSeconds: o['pass-seconds'],
        budget: o.budget,
        during: o.during,
        inApi: o['pass-in-api'] ?? false,
        main: o['pass-main'],
      };
      const f = await retentionPass(lab, big, name, options);
      failures += f.list.pass.failures + f.list.none.failures;
      const [listRatio, freshP99] = [f.list.pass.p99 / f.list.none.p99, p99(f.fresh.pass)];
      const progress = `${fmt(f.done)} of ${fmt(f.due)} in ${fmt(f.seconds)} s${f.finished ? '' : ' (stopped)'}`;
      rows.push([
        name,
        progress,
        fmt(f.done / f.seconds),
        ...ratioCells(f.list.pass.p99, f.list.none.p99),
        fmt(freshP99),
        fmt(p99(f.fresh.none)),
      ]);
      verdicts.push(
        verdict(
          listRatio <= 1.5,
          `${name}: another client's list p99 within 1.5 x while the pass runs (${fmt(listRatio, 2)} x)`,
        ),
      );
      verdicts.push(
        verdict(
          freshP99 < 250,
          `${name}: fresh changes' commit→arrival p99 < 250 ms while the pass runs (${fmt(freshP99)} ms)`,
        ),
      );
    }
    log();
    log(
      `The first retention passes on the year (RETENTION_BUDGET_PERCENT=${o.budget}), slices of ${o.slice} s with the pass and without, taking turns; another client's list at ${o.rate}/s, fresh changes at ${o.during}/s:`,
    );
    const header = [
      'pass',
      'rows done',
      'rows/s',
      'list p99 during ms',
      'without ms',
      'during ÷ without',
      'fresh commit→arrival p99 during ms',
      'without ms',
    ];
    log(table(header, rows));
  }

  log();
  for (const line of verdicts) log(line);
  await footer(big.databaseUrl, failures);
});
