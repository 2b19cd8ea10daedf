import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { readOptions } from './flags';

/** The checkout: dist-bench/bench/harness is three folders down. */
const ROOT = join(__dirname, '..', '..', '..');

/** The service as `nest build` compiles it: every bench starts this, never its own copy. */
export const SERVICE_MAIN = join(ROOT, 'dist', 'src', 'main.js');

/** A process a benchmark started: the service or a floor. */
export interface BenchProcess {
  name: string;
  url: string;
  output: string[];
  child: ChildProcess;
  stop(): Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

type Env = Record<string, string>;
interface StartOptions {
  /** Node's own flags (e.g. --require, --cpu-prof). */
  nodeArgs?: string[];
  /** Opens an IPC channel (child.send, child.on('message')). */
  ipc?: boolean;
  /** Up once this path answers 2xx; without it, once / answers at all, or with `ipc` once the process sends a message. */
  probe?: string;
}

/** Starts `script` on a free port (PORT and FLOOR_PORT) with `env`; waits 30 s at most for it to be up. */
export async function startProcess(
  name: string,
  script: string,
  env: Env,
  opts: StartOptions = {},
): Promise<BenchProcess> {
  const port = String(await freePort());
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), script], {
    env: { ...process.env, ...env, PORT: port, FLOOR_PORT: port },
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (chunk: Buffer) => output.push(String(chunk)));
  const [url, exited] = [`http://127.0.0.1:${port}`, new Promise((resolve) => child.once('exit', resolve))];
  const stop = async (): Promise<void> => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await (child.kill('SIGTERM'), exited);
    clearTimeout(timer);
  };
  let messaged = false;
  child.once('message', () => (messaged = true));
  const ready = async (): Promise<boolean> =>
    opts.ipc && !opts.probe ? messaged : (await fetch(`${url}${opts.probe ?? '/'}`)).ok || !opts.probe;
  for (const deadline = Date.now() + 30_000; !(await ready().catch(() => false));) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output.join('')}`);
    if (Date.now() > deadline)
      throw await stop().then(() => new Error(`${name} did not start in 30 s:\n${output.join('')}`));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { name, url, output, child, stop };
}

/**
 * Node's flags the service ships with, read off `npm run start:prod` (test/deploy-files holds the
 * Dockerfile's CMD and `npm start` to the same): the benches measure it so.
 */
const SERVICE_NODE_ARGS =
  (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts['start:prod']
    ?.split(' ')
    .filter((word) => word.startsWith('--')) ?? [];

/** The service (`dist/src/main.js`, or another build's) with `env`, ready once /health/live is 200. */
export const startService = (name: string, env: Env, options: StartOptions & { main?: string } = {}) =>
  startProcess(name, options.main ?? SERVICE_MAIN, env, {
    ...options,
    nodeArgs: [...SERVICE_NODE_ARGS, ...(options.nodeArgs ?? [])],
    probe: '/health/live',
  });

/** What a bench run holds: the processes it started and what it must close, at its end, last first. */
export class Lab {
  readonly processes: BenchProcess[] = [];
  readonly closers: (() => unknown)[] = [];

  /** The started process, stopped at the end of the run. */
  async start(starting: Promise<BenchProcess>): Promise<BenchProcess> {
    const started = await starting;
    this.processes.push(started);
    this.defer(() => started.stop());
    return started;
  }

  readonly defer = (close: () => unknown): number => this.closers.push(close);
}

/**
 * Runs a bench: its options from process.argv (exit code 2 on a bad flag), then `main`; whatever it
 * started or deferred is closed at the end, and a failure prints the processes' last lines and
 * exits with code 1.
 */
export function runBench<O>(
  bench: string,
  parse: (argv: string[]) => O,
  main: (options: O, lab: Lab) => Promise<void>,
) {
  const options = readOptions(bench, parse);
  const lab = new Lab();
  const run = async (): Promise<void> => {
    try {
      await main(options, lab);
    } catch (error) {
      for (const p of lab.processes) {
        const tail = p.output.join('').split('\n').slice(-20).join('\n');
        process.stderr.write(`--- ${p.name} (last lines) ---\n${tail}\n`);
      }
      throw error;
    } finally {
      for (const close of lab.closers.reverse()) await new Promise((done) => done(close())).catch(() => undefined);
    }
  };
  run().catch((error: unknown) => {
    process.stderr.write(`${bench} failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}

/** From /proc/<pid>/stat: the command, and the user + system CPU seconds of the process and of its reaped children. */
function procStat(pid: number | string): { comm: string; own: number; children: number } {
  let stat = '';
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    // gone, or never there: NaN
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, cutime, cstime] = [11, 12, 13, 14].map((i) => Number(fields[i]) / 100) as number[];
  const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  return { comm, own: utime + stime, children: cutime + cstime };
}

/** User + system CPU seconds of a process so far, from /proc (NaN where there is none). */
export const cpuSeconds = (pid: number | undefined): number => (pid === undefined ? NaN : procStat(pid).own);

/**
 * User + system CPU seconds so far of every PostgreSQL process on this machine (postmaster, every
 * backend, the background processes), and of the backends that have exited (the postmaster's reaped
 * children), from /proc: whatever PostgreSQL does for whoever loads it.
 */
export function postgresCpuSeconds(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const { comm, own, children } = procStat(pid);
    if (comm.startsWith('postgres') && Number.isFinite(own)) total += own + children;
  }
  return total;
}
