import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, relative } from 'node:path';
import Redis from 'ioredis';
import openapiTS, { astToString } from 'openapi-typescript';
import { Client } from 'pg';
import { testDatabaseServerUrl, testDatabaseUrl, testRedisUrl } from './test-servers';

// npm run client:check: starts the compiled service against a database of its own, generates
// TypeScript types from the OpenAPI document it serves, and compiles examples/typescript-client.ts
// with them under `tsc --strict`. Exits non-zero on any failure and always removes what it made.

const ROOT = join(__dirname, '..', '..');
const MAIN_JS = join(ROOT, 'dist', 'src', 'main.js');
const MIGRATE_JS = join(ROOT, 'dist', 'src', 'database', 'migrate.js');
const GENERATED_DIR = join(ROOT, 'examples', 'generated');
const EXAMPLES_TSCONFIG = join(ROOT, 'examples', 'tsconfig.json');
const TSC = require.resolve('typescript/bin/tsc');

interface Run {
  env: Record<string, string>;
  databaseUrl: string;
  databaseName: string;
  queuePrefix: string;
  service?: ChildProcess;
  databaseCreated: boolean;
}

const started = Date.now();
const step = (message: string): void => {
  process.stdout.write(`[client:check ${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);
};

function runEnv(port: number): Run {
  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const databaseName = `kyc_test_client_${runId}`;
  const databaseUrl = testDatabaseUrl(databaseName);
  const queuePrefix = `kyctest_client_${runId}`;
  const env = {
    NODE_ENV: 'production',
    PORT: String(port),
    APP_ROLE: 'api',
    DATABASE_URL: databaseUrl,
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: queuePrefix,
    ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    INTERNAL_API_TOKEN: `internal-${randomBytes(16).toString('hex')}`,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: 'warn',
  };
  return { env, databaseUrl, databaseName, queuePrefix, databaseCreated: false };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Runs a Node script to completion; resolves with its exit code and everything it printed. */
function runNode(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

async function startService(run: Run, port: number): Promise<string> {
  const child = spawn(process.execPath, [MAIN_JS], {
    cwd: ROOT,
    env: { ...process.env, ...run.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  run.service = child;
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}:\n${output.join('')}`);
    try {
      const response = await fetch(`${url}/health/live`);
      if (response.ok) return url;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the service did not start within 30 s:\n${output.join('')}`);
}

async function stopService(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

async function dropDatabase(run: Run): Promise<void> {
  if (!run.databaseCreated || !/test/.test(run.databaseName)) return;
  const client = new Client({ connectionString: testDatabaseServerUrl() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS "${run.databaseName.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

async function deleteQueueKeys(run: Run): Promise<void> {
  const redis = new Redis(run.env.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${run.queuePrefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function cleanUp(run: Run): Promise<void> {
  await stopService(run.service);
  const results = await Promise.allSettled([dropDatabase(run), deleteQueueKeys(run)]);
  for (const result of results) {
    if (result.status === 'rejected') step(`clean-up failed: ${String(result.reason)}`);
  }
}

async function check(run: Run, port: number): Promise<boolean> {
  step(`migrating the throwaway database ${run.databaseName}`);
  run.databaseCreated = true;
  const migrated = await runNode([MIGRATE_JS, '--create-database'], { ...process.env, ...run.env });
  if (migrated.code !== 0) throw new Error(`migration failed:\n${migrated.output}`);

  step('starting dist/src/main.js');
  const url = await startService(run, port);
  const response = await fetch(`${url}/api/docs-json`);
  if (!response.ok) throw new Error(`GET /api/docs-json answered ${response.status}`);
  const document = await response.text();

  step('generating TypeScript types with openapi-typescript');
  await mkdir(GENERATED_DIR, { recursive: true });
  await writeFile(join(GENERATED_DIR, 'openapi.json'), document);
  const ast = await openapiTS(document);
  const header = '// Generated by `npm run client:check` from GET /api/docs-json. Do not edit.\n\n';
  const typesFile = join(GENERATED_DIR, 'api.d.ts');
  await writeFile(typesFile, header + astToString(ast));
  step(`wrote ${relative(ROOT, typesFile)}`);

  step(`tsc --strict -p ${relative(ROOT, EXAMPLES_TSCONFIG)}`);
  const compiled = await runNode([TSC, '--strict', '--noEmit', '-p', EXAMPLES_TSCONFIG], process.env);
  if (compiled.output) process.stdout.write(compiled.output);
  return compiled.code === 0;
}

async function main(): Promise<void> {
  const port = await freePort();
  const run = runEnv(port);
  const interrupt = (): void => {
    void cleanUp(run).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  let ok = false;
  try {
    ok = await check(run, port);
  } catch (error) {
    process.stderr.write(`client:check: ${error instanceof Error ? error.message : String(error)}\n`);
  } finally {
    await cleanUp(run);
  }
  step(ok ? 'OK: the example compiles against the generated types' : 'FAILED: see the errors above');
  process.exit(ok ? 0 : 1);
}

void main();
