/**
 * npm run bench:list:ab -- --a <dist/src/main.js of build A> --b <… of build B>
 *
 * A paired A/B of two builds of the service on the list route, on bench:list's seeded database, in
 * interleaved slices (A B, then B A, …). Per pair: req/s and the server's CPU per request, the B/A
 * ratios, their medians, and how many pairs favour B. A change is kept only if the pairs show it.
 * Options and defaults: parseOptions; --env KEY=VALUE (repeatable) sets a setting of both builds.
 */
import { FlagError, envPairs, parseFlags } from '../harness/flags';
import { autocannonLoad } from '../harness/loads';
import { runBench, startService } from '../harness/processes';
import { fmt, log, table } from '../harness/report';
import { serviceEnv } from '../harness/service-env';
import { interleave, median } from '../harness/slices';
import { benchDatabaseUrl, perAccount } from './seed';

function parseOptions(argv: string[]) {
  const text = { type: 'string' } as const;
  const strings = { a: text, b: text, query: text, env: { ...text, multiple: true } } as const;
  const values = parseFlags(argv, strings, { pairs: 10, seconds: 4, connections: 50 });
  if (values.a === undefined || values.b === undefined) throw new FlagError('--a and --b are required');
  return { ...values, a: values.a, b: values.b, query: values.query ?? 'limit=20', env: envPairs(values.env) };
}

runBench('bench:list:ab', parseOptions, async (options, lab) => {
  const env = serviceEnv(benchDatabaseUrl(), 'kyc-bench', { APP_ROLE: 'api', ...options.env });
  const a = await lab.start(startService('A', env, { main: options.a }));
  const b = await lab.start(startService('B', env, { main: options.b }));
  const requests = perAccount(options.query);
  const targets = [
    { name: 'A', pid: a.child.pid, run: autocannonLoad(a.url, requests, options.connections) },
    { name: 'B', pid: b.child.pid, run: autocannonLoad(b.url, requests, options.connections) },
  ] as const;
  const { measured, perSlice } = await interleave(targets, {
    warmup: 2,
    slices: options.pairs,
    sliceSeconds: options.seconds,
  });
  // A slice of interleave is one pair: each build once, who goes first alternating.
  const header = 'pair,A req/s,B req/s,B/A req/s,A CPU ms/req,B CPU ms/req,B/A CPU,A PG ms/req,B PG ms/req'.split(',');
  const row = ({ A, B }: (typeof perSlice)[number], i: number): string[] => [
    String(i + 1),
    ...[A.rps, B.rps].map((n) => fmt(n)),
    ...[B.rps / A.rps, A.cpuMs, B.cpuMs, B.cpuMs / A.cpuMs, A.pgCpuMs, B.pgCpuMs].map((n) => fmt(n, 3)),
  ];
  log(table(header, perSlice.map(row)));
  const ratio = (key: 'rps' | 'cpuMs' | 'pgCpuMs') => perSlice.map((p) => p.B[key] / p.A[key]);
  const [rps, cpu, pg] = [ratio('rps'), ratio('cpuMs'), ratio('pgCpuMs')];
  const below = (values: number[]): number => values.filter((r) => r < 1).length;
  log(
    `median B/A req/s ${fmt(median(rps), 3)} (B ahead in ${rps.length - below(rps)} of ${rps.length} pairs); ` +
      `median B/A CPU per request ${fmt(median(cpu), 3)} (B cheaper in ${below(cpu)}); ` +
      `median B/A PostgreSQL CPU per request ${fmt(median(pg), 3)} (B cheaper in ${below(pg)})`,
  );
  // Errors answer fast: a run where the list was not served (bench:list's database not seeded) must not pass for one.
  const [failedA, failedB] = [measured.A.failures, measured.B.failures];
  if (failedA + failedB > 0)
    throw new Error(`${failedA} answers of A and ${failedB} of B were not 2xx: these figures are not the list's`);
});
