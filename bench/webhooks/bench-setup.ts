import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { benchDatabaseUrlFrom, cleanRedisPrefixes, recreateBenchDatabase } from '../common/bench-db';
import { BenchProcess, exited, startProcess } from '../common/processes';

const ROOT = join(__dirname, '..', '..');
export const SERVICE_MAIN = join(ROOT, 'src', 'main.js');
export const FLOOR_MAIN = join(__dirname, 'floor.js');

/** Queue prefixes of this benchmark: the service's and the plain-Bull floor's. Cleaned at start and end. */
export const SERVICE_PREFIX = 'kyc_whbench';
export const FLOOR_PREFIX = 'kyc_whbench_floor';

export const BENCH_ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
export const BENCH_INTERNAL_API_TOKEN = `internal-${randomBytes(16).toString('hex')}`;
export const BENCH_SECRET_ENCRYPTION_KEY = randomBytes(32).toString('base64');

/**
 * The webhook bench database: BENCH_WEBHOOKS_DATABASE_URL, else DATABASE_URL (or the contract's
 * default) renamed to kyc_webhooks_bench. A name without "bench" is refused: it is dropped per run.
 */
export function benchDatabaseUrl(env: NodeJS.ProcessEnv = process.env): string {
  return benchDatabaseUrlFrom('BENCH_WEBHOOKS_DATABASE_URL', 'kyc_webhooks_bench', env);
}

/** Every run starts from an empty, freshly migrated database so that runs compare. */
export async function prepareBenchDatabase(databaseUrl: string): Promise<void> {
  await recreateBenchDatabase(databaseUrl);
}

/** Deletes every Redis key under this benchmark's prefixes (and only those). */
export async function cleanRedis(redisUrl: string): Promise<number> {
  return cleanRedisPrefixes(redisUrl, [SERVICE_PREFIX, FLOOR_PREFIX]);
}

/**
 * The service as the webhook benchmarks run it (docker-compose.yml's settings, logs at warn, the
 * rate limiter off, webhooks to the bench's receiver on 127.0.0.1 over plain HTTP allowed).
 */
export function webhookServiceEnv(
  databaseUrl: string,
  redisUrl: string,
  queuePrefix: string,
  concurrency: number,
): Record<string, string> {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    WEBHOOK_CONCURRENCY: String(concurrency),
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    INTERNAL_API_TOKEN: BENCH_INTERNAL_API_TOKEN,
    SECRET_ENCRYPTION_KEY: BENCH_SECRET_ENCRYPTION_KEY,
  };
}

/** A service process (api, worker or all). */
export type ServiceProcess = BenchProcess;

/** Starts dist/src/main.js with `env` and waits until /health/live answers. */
export async function startService(
  name: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  return startProcess(name, SERVICE_MAIN, env, {
    nodeArgs,
    ready: async (url) => (await fetch(`${url}/health/live`)).ok,
    stopGraceMs: 15_000,
  });
}

/** Runs a floor process to completion and returns its JSON report line. */
export async function runFloor<T>(env: Record<string, string>, timeoutMs: number): Promise<T> {
  const child = spawn(process.execPath, [FLOOR_MAIN], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await exited(child);
  clearTimeout(timer);
  const line = stdout.join('').trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{'))
    throw new Error(`floor ${env.FLOOR_MODE} exited with ${code}:\n${stdout.join('')}${stderr.join('')}`);
  return JSON.parse(line) as T;
}
