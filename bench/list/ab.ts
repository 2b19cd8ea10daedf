/**
 * npm run bench:list:ab -- --a <dist/src/main.js of build A> --b <… of build B>
 *
 * A paired A/B of two builds of the service on the list route, on bench:list's seeded database: both
 * run side by side and take turns under the same load in interleaved slices (A B, then B A, …), so
 * the machine's drift weighs on both alike. Per pair: req/s and the server's CPU per request, the
 * B/A ratios, their medians, and how many pairs favour B. A change is kept only if the pairs show it.
 *
 * Options: --a, --b (required), --pairs <n> (10), --seconds <s> (4, per slice), --connections <n>
 * (50), --query <string> (limit=20), --env KEY=VALUE (repeatable: settings for both builds).
 */
import { FlagError, envPairs, parseFlags, positiveInteger, readOptions } from '../harness/flags';
import { startService } from '../harness/processes';
import { fmt, log, table } from '../harness/report';
import { serviceEnv } from '../harness/service-env';
import { autocannonLoad, interleave, median } from '../harness/slices';
import { benchDatabaseUrl, perAccount } from './data';

function parseOptions(argv: string[]) {
  const values = parseFlags(argv, {
    a: { type: 'string' },
    b: { type: 'string' },
    pairs: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string' },
    query: { type: 'string' },
    env: { type: 'string', multiple: true },
  });
  if (typeof values.a !== 'string' || typeof values.b !== 'string') throw new FlagError('--a and --b are required');
  return {
    a: values.a,
    b: values.b,
    pairs: positiveInteger(values, 'pairs', 10),
    seconds: positiveInteger(values, 'seconds', 4),
    connections: positiveInteger(values, 'connections', 50),
    query: values.query ?? 'limit=20',
    env: envPairs(values.env),
  };
}

async function main(): Promise<void> {
  const options = readOptions('bench:list:ab', parseOptions);
  const env = serviceEnv(benchDatabaseUrl(), 'kyc-bench', { APP_ROLE: 'api', ...options.env });
  const a = await startService('A', env, { main: options.a });
  try {
    const b = await startService('B', env, { main: options.b });
    try {
      const requests = perAccount(options.query);
      const { perSlice } = await interleave(
        (['A', 'B'] as const).map((name) => {
          const target = name === 'A' ? a : b;
          return { name, pid: target.child.pid, run: autocannonLoad(target.url, requests, options.connections) };
        }),
        { warmup: 2, slices: options.pairs, sliceSeconds: options.seconds },
      );
      // A slice of interleave is one pair: each build once, who goes first alternating.
      const pairs = perSlice.map(({ A, B }) => ({ rps: [A.rps, B.rps], cpu: [A.cpuUsPerRequest, B.cpuUsPerRequest] }));
      const header = ['pair', 'A req/s', 'B req/s', 'B/A req/s', 'A CPU µs/req', 'B CPU µs/req', 'B/A CPU'];
      const row = ({ rps: [ra = 0, rb = 0], cpu: [ca = 0, cb = 0] }: (typeof pairs)[number], i: number): string[] => [
        String(i + 1),
        fmt(ra),
        fmt(rb),
        fmt(rb / ra, 3),
        fmt(ca),
        fmt(cb),
        fmt(cb / ca, 3),
      ];
      log(table(header, pairs.map(row)));
      const rps = pairs.map(({ rps: [ra = 0, rb = 0] }) => rb / ra);
      const cpu = pairs.map(({ cpu: [ca = 0, cb = 0] }) => cb / ca);
      log(
        `median B/A req/s ${fmt(median(rps), 3)} (B ahead in ${rps.filter((r) => r > 1).length} of ${rps.length} pairs); ` +
          `median B/A CPU per request ${fmt(median(cpu), 3)} (B cheaper in ${cpu.filter((r) => r < 1).length} of ${cpu.length})`,
      );
    } finally {
      await b.stop();
    }
  } finally {
    await a.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:list:ab failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
