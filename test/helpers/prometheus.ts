import { ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { dump, load } from 'js-yaml';
import { freePort } from './test-app';

/**
 * Debian's Prometheus (package `prometheus`), started by a test on a free port with a
 * throw-away data directory, and the rewrites that turn the shipped rules into a test copy.
 */

export const PROMETHEUS_MISSING =
  'no prometheus found (PROMETHEUS_PATH is unset and prometheus is neither on PATH nor in /usr/bin); ' +
  'install it with `apt-get install -y prometheus` (it brings promtool) or set PROMETHEUS_PATH';

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/usr/local/bin'];
  return dirs.map((dir) => join(dir, name)).find(executable);
}

/** PROMETHEUS_PATH, else `prometheus` on PATH or in /usr/bin; undefined when there is none. */
export function findPrometheus(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.PROMETHEUS_PATH || onPath('prometheus', env);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3, y: 31536000e3 };
const DURATION = /(\d+)(ms|s|m|h|d|w|y)/g;

/** A Prometheus duration (`1h30m`, `10m`, `500ms`) in milliseconds. */
export function durationMs(text: string): number {
  if (!/^(\d+(ms|s|m|h|d|w|y))+$/.test(text)) throw new Error(`not a Prometheus duration: ${text}`);
  let total = 0;
  for (const [, amount, unit] of text.matchAll(DURATION)) total += Number(amount) * UNIT_MS[unit];
  return total;
}

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  [key: string]: unknown;
}
interface RuleFile {
  groups: Array<{ name: string; interval?: string; rules: Rule[] }>;
}

/**
 * The shipped rules with time compressed for a test: every `for:` becomes `forDuration`, every
 * range or subquery range longer than `maxRange` becomes `maxRange`, group intervals go. Expressions,
 * thresholds, labels and annotations stay as shipped.
 */
export function compressRules(text: string, forDuration: string, maxRange: string): { yaml: string; alerts: string[] } {
  const file = load(text) as RuleFile;
  const cap = durationMs(maxRange);
  const alerts: string[] = [];
  for (const group of file.groups) {
    delete group.interval;
    for (const rule of group.rules) {
      if (rule.alert) alerts.push(rule.alert);
      if (rule.for !== undefined) rule.for = forDuration;
      rule.expr = String(rule.expr).replace(
        /\[((?:\d+(?:ms|s|m|h|d|w|y))+)(:(?:(?:\d+(?:ms|s|m|h|d|w|y))+)?)?\]/g,
        (whole, range: string, step: string | undefined) =>
          durationMs(range) > cap ? `[${maxRange}${step ?? ''}]` : whole,
      );
    }
  }
  return { yaml: dump(file, { lineWidth: -1 }), alerts };
}

export interface PrometheusAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
  value: string;
}

export interface QueryResult {
  status: 'success' | 'error';
  errorType?: string;
  error?: string;
  data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
}

/** A real Prometheus process of the test's own; `stop()` ends that process (by its pid) and removes its files. */
export class PrometheusServer {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly output: string[],
  ) {}

  /** Writes `files` (prometheus.yml among them) into a temp directory and runs Prometheus on it. */
  static async start(binary: string, files: Record<string, string>): Promise<PrometheusServer> {
    const dir = mkdtempSync(join(tmpdir(), 'kyc-prometheus-'));
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const port = await freePort();
    const child = spawn(
      binary,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output: string[] = [];
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const server = new PrometheusServer(`http://127.0.0.1:${port}`, child, dir, output);
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (child.exitCode !== null) {
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`prometheus exited with ${child.exitCode}:\n${output.join('')}`);
      }
      const ready = await fetch(`${server.url}/-/ready`).then(
        (res) => res.ok,
        () => false,
      );
      if (ready) return server;
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`prometheus did not get ready within 15 s:\n${output.join('')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** An instant query; Prometheus's answer as it is (status `error` for a query it rejects). */
  async query(expr: string): Promise<QueryResult> {
    const res = await fetch(`${this.url}/api/v1/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: expr }),
    });
    return (await res.json()) as QueryResult;
  }

  /** Pending and firing alerts (resolved ones are not listed). */
  async alerts(): Promise<PrometheusAlert[]> {
    const res = await fetch(`${this.url}/api/v1/alerts`);
    const body = (await res.json()) as { data: { alerts: PrometheusAlert[] } };
    return body.data.alerts;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
