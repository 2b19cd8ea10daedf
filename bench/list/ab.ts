/**
 * npm run bench:list:ab -- --a <dist/src/main.js of build A> --b <… of build B>
 *
 * A paired A/B of two builds of the service on the list route: both run side by side on the seeded
 * bench database (npm run bench:list seeds it), and take turns under the same load in short
 * interleaved slices (A B, then B A, …), so the machine's drift weighs on both alike. Per slice: req/s
 * and the server process's CPU time per request (user + system, from /proc). Printed: every pair's
 * B/A ratios, their medians, and how many pairs favour B. A change is kept only if the pairs show it.
 *
 * Options: --a, --b (required), --pairs <n> (10), --seconds <s> (4, per slice), --connections <n>
 * (50), --query <string> (limit=20: the first page), --env KEY=VALUE (repeatable: service settings
 * for both builds, over bench:list's, e.g. --env LOG_LEVEL=info).
 */
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { FlagError, parseFlags, positiveInteger, readOptions } from '../common/flags';
import { LARGE_ACCOUNTS, MEDIUM_ACCOUNTS, benchDatabaseUrl, benchSecret } from './bench-env';
import { Target, serviceEnv, startTarget } from './targets';

interface Options {
  a: string;
  b: string;
  pairs: number;
  seconds: number;
  connections: number;
  query: string;
  env: Record<string, string>;
}

interface Slice {
  rps: number;
  cpuUsPerRequest: number;
}

const SETTLE_MS = 500;
const TICKS_PER_SECOND = 100;

function parseOptions(argv: string[]): Options {
  const values = parseFlags(argv, {
    a: { type: 'string' },
    b: { type: 'string' },
    pairs: { type: 'string' },
    seconds: { type: 'string' },
    connections: { type: 'string' },
    query: { type: 'string' },
    env: { type: 'string', multiple: true },
  });
  const env: Record<string, string> = {};
  for (const pair of (values.env as string[] | undefined) ?? []) {
    const at = pair.indexOf('=');
    if (at < 1) throw new FlagError(`--env needs KEY=VALUE, got "${pair}"`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  if (typeof values.a !== 'string' || typeof values.b !== 'string') throw new FlagError('--a and --b are required');
  return {
    a: values.a,
    b: values.b,
    pairs: positiveInteger(values, 'pairs', 10),
    seconds: positiveInteger(values, 'seconds', 4),
    connections: positiveInteger(values, 'connections', 50),
    query: typeof values.query === 'string' ? values.query : 'limit=20',
    env,
  };
}

/** utime + stime of a process, in clock ticks (USER_HZ, 100 on Linux). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function slice(target: Target, options: Options): Promise<Slice> {
  const accounts = LARGE_ACCOUNTS + MEDIUM_ACCOUNTS;
  let next = 0;
  let counted = 0;
  let failed = 0;
  let ticksAtSettle = 0;
  const pid = target.child.pid as number;
  const startedAt = performance.now();
  const settle = setTimeout(() => (ticksAtSettle = cpuTicks(pid)), SETTLE_MS);
  await new Promise<void>((resolve, reject) => {
    const run = autocannon(
      {
        url: target.url,
        connections: options.connections,
        duration: options.seconds,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({
              ...request,
              path: `/api/v1/public/kyc/verifications?${options.query}`,
              headers: { authorization: `Bearer ${benchSecret(next++ % accounts)}` },
            }),
          },
        ],
      },
      (error: unknown) => (error ? reject(error as Error) : resolve()),
    );
    run.on('response', (_client, status) => {
      if (performance.now() - startedAt < SETTLE_MS) return;
      counted++;
      if (status !== 200) failed++;
    });
  });
  clearTimeout(settle);
  const ticks = cpuTicks(pid) - ticksAtSettle;
  const seconds = (performance.now() - startedAt - SETTLE_MS) / 1000;
  if (failed > 0) process.stdout.write(`WARNING: ${target.name}: ${failed} non-200 answers\n`);
  return { rps: counted / seconds, cpuUsPerRequest: (ticks / TICKS_PER_SECOND / counted) * 1e6 };
}

function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

async function main(): Promise<void> {
  const options = readOptions('bench:list:ab', parseOptions);
  const env = { ...serviceEnv(benchDatabaseUrl()), ...options.env };
  const a = await startTarget('A', options.a, env, '/health/live');
  const b = await startTarget('B', options.b, env, '/health/live').catch(async (error: unknown) => {
    await a.stop();
    throw error;
  });
  try {
    await slice(a, { ...options, seconds: 2 });
    await slice(b, { ...options, seconds: 2 });
    const rps: number[] = [];
    const cpu: number[] = [];
    process.stdout.write(
      '| pair | A req/s | B req/s | B/A req/s | A CPU µs/req | B CPU µs/req | B/A CPU |\n|---|---:|---:|---:|---:|---:|---:|\n',
    );
    for (let pair = 0; pair < options.pairs; pair++) {
      const first = pair % 2 === 0 ? a : b;
      const second = first === a ? b : a;
      const one = await slice(first, options);
      const two = await slice(second, options);
      const [sa, sb] = first === a ? [one, two] : [two, one];
      rps.push(sb.rps / sa.rps);
      cpu.push(sb.cpuUsPerRequest / sa.cpuUsPerRequest);
      process.stdout.write(
        `| ${pair + 1} | ${sa.rps.toFixed(0)} | ${sb.rps.toFixed(0)} | ${(sb.rps / sa.rps).toFixed(3)} | ` +
          `${sa.cpuUsPerRequest.toFixed(0)} | ${sb.cpuUsPerRequest.toFixed(0)} | ${(sb.cpuUsPerRequest / sa.cpuUsPerRequest).toFixed(3)} |\n`,
      );
    }
    process.stdout.write(
      `median B/A req/s ${median(rps).toFixed(3)} (B ahead in ${rps.filter((r) => r > 1).length} of ${rps.length} pairs); ` +
        `median B/A CPU per request ${median(cpu).toFixed(3)} (B cheaper in ${cpu.filter((r) => r < 1).length} of ${cpu.length})\n`,
    );
  } finally {
    await Promise.all([a.stop(), b.stop()]);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
