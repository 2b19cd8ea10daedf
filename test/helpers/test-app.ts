import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'pg';
import { useCorrectJsonParsers } from 'src/database/pg-json';
import request from 'supertest';
import TestAgent from 'supertest/lib/agent';
import { checkedAgent } from './checked-http';
import { documentValidator } from './openapi-validator';

/** A real service process (the compiled dist/), started the way production starts it. */
export interface TestApp {
  url: string;
  port: number;
  /** Every response is checked against the service's OpenAPI document (see checked-http.ts). */
  http: TestAgent;
  /** The worker's database, for assertions that the API cannot show (no data change, outbox rows). */
  db: Pool;
  adminToken: string;
  internalToken: string;
  /** Every line the process printed on stdout and stderr so far. */
  output: string[];
  process: ChildProcess;
  /** SIGTERM and wait for exit. */
  close(): Promise<number | null>;
  /** SIGKILL and wait for exit. */
  kill(): Promise<void>;
}

// The test process reads jsonb as the service does (correctly on every Node.js line; common/json.ts).
useCorrectJsonParsers();

export const MAIN_JS = join(__dirname, '..', '..', 'dist', 'src', 'main.js');

/** Whether nothing listens on 127.0.0.1:`port` now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Ports per Jest worker: nine workers at most (test/setup/global-setup.ts) fit in 20000-31699. */
const PORT_BAND = 1_300;
let nextPortOffset = Math.floor(Math.random() * PORT_BAND);

/**
 * A port for a process the test starts, free when asked. Taken below the kernel's ephemeral range
 * (32768 and up, where `listen(0)` and outgoing connections take theirs), in a band of its own per Jest
 * worker: between this answer and the process binding the port, neither a spec file on another
 * worker nor any `listen(0)` can take it.
 */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const base = 20_000 + (worker - 1) * PORT_BAND;
  for (let tries = 0; tries < PORT_BAND; tries += 1) {
    const port = base + (nextPortOffset++ % PORT_BAND);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${base}-${base + PORT_BAND - 1}`);
}

function waitForExit(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function waitUntilListening(
  url: string,
  child: ChildProcess,
  output: string[],
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}:\n${output.join('')}`);
    try {
      await fetch(`${url}/health/live`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`service did not start within ${timeoutMs} ms:\n${output.join('')}`);
}

/**
 * Starts the service on a free port with the worker's database and queue prefix; `env` overrides
 * settings for this process only (a short retry schedule, APP_ROLE=worker, another Redis...).
 */
export async function startApp(
  env: Record<string, string> = {},
  options: { waitForHttp?: boolean } = {},
): Promise<TestApp> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = spawn(process.execPath, [MAIN_JS], {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  if (options.waitForHttp !== false) {
    try {
      await waitUntilListening(url, child, output, 20_000);
    } catch (error) {
      child.kill('SIGKILL');
      throw error;
    }
  }
  const db = new Pool({ connectionString: env.DATABASE_URL ?? process.env.DATABASE_URL, max: 4 });
  return {
    url,
    port,
    http: checkedAgent(request(url), documentValidator(url)),
    db,
    adminToken: env.ADMIN_TOKEN ?? (process.env.ADMIN_TOKEN as string),
    internalToken: env.INTERNAL_API_TOKEN ?? (process.env.INTERNAL_API_TOKEN as string),
    output,
    process: child,
    close: async () => {
      child.kill('SIGTERM');
      const code = await waitForExit(child);
      await db.end();
      return code;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await waitForExit(child);
      await db.end();
    },
  };
}
