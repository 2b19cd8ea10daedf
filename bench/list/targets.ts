import { join } from 'node:path';
import { BenchProcess, startProcess } from '../common/processes';
import { BENCH_ADMIN_TOKEN, BENCH_INTERNAL_API_TOKEN, BENCH_SECRET_ENCRYPTION_KEY } from './bench-env';

/** A server process under test: the real service or the floor. */
export type Target = BenchProcess;

const ROOT = join(__dirname, '..', '..');
export const SERVICE_MAIN = join(ROOT, 'src', 'main.js');
export const FLOOR_MAIN = join(__dirname, 'floor-server.js');
export const NEST_FLOOR_MAIN = join(__dirname, 'nest-floor.js');
export const ROUND_TRIP_FLOOR_MAIN = join(__dirname, 'round-trip-floor.js');

/** The service as the list benchmarks run it; the floors read DATABASE_URL and the key from it too. */
export function serviceEnv(databaseUrl: string): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    APP_ROLE: 'api',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    QUEUE_PREFIX: 'kyc-bench',
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    INTERNAL_API_TOKEN: BENCH_INTERNAL_API_TOKEN,
    SECRET_ENCRYPTION_KEY: BENCH_SECRET_ENCRYPTION_KEY,
  };
}

/** Starts `script` with `env` (and `nodeArgs`, node's own flags) and waits until `probePath` answers with anything at all. */
export async function startTarget(
  name: string,
  script: string,
  env: Record<string, string>,
  probePath: string,
  nodeArgs: string[] = [],
): Promise<Target> {
  return startProcess(name, script, env, {
    nodeArgs,
    portVariables: ['PORT', 'FLOOR_PORT'],
    ready: async (url) => {
      await fetch(`${url}${probePath}`);
      return true;
    },
    stopGraceMs: 5_000,
  });
}
