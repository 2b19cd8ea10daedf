import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** A server process a benchmark started: the real service or a floor. */
export interface BenchProcess {
  name: string;
  url: string;
  output: string[];
  /** The node process itself (its IPC channel when started with `ipc`). */
  child: ChildProcess;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export interface StartOptions {
  /** Extra node flags (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** Environment variables that receive the chosen port. */
  portVariables?: string[];
  /** True once the process answers as wanted at `url`. */
  ready: (url: string) => Promise<boolean>;
  /** How long SIGTERM may take before SIGKILL. */
  stopGraceMs: number;
  /** Opens an IPC channel to the process (child.send, child.on('message')). */
  ipc?: boolean;
}

/** Starts `script` on a free port with `env` and waits (30 s at most) until `ready` says so. */
export async function startProcess(
  name: string,
  script: string,
  env: Record<string, string>,
  options: StartOptions,
): Promise<BenchProcess> {
  const port = await freePort();
  const portEnv = Object.fromEntries((options.portVariables ?? ['PORT']).map((variable) => [variable, String(port)]));
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), script], {
    env: { ...process.env, ...env, ...portEnv },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), options.stopGraceMs);
    await exited(child);
    clearTimeout(timer);
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output.join('')}`);
    if (await options.ready(url).catch(() => false)) return { name, url, output, child, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not start within 30 s:\n${output.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
