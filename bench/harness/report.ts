import { cpus, loadavg } from 'node:os';
import { onServer } from './db';
import type { Measured } from './slices';

/** How every bench reports: lines on stdout, Markdown tables, one PASS/FAIL line per target. */

export const log = (line = ''): void => void process.stdout.write(`${line}\n`);

export const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n) ? n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';

const load1 = (): number => loadavg()[0] ?? NaN;
const LOAD_AT_START = load1();

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** A target's line: PASS or FAIL, what was asked, what was measured. */
export const verdict = (ok: boolean, text: string): string => `${ok ? 'PASS' : 'FAIL'}  ${text}`;

/** A Measured's req/s, p50, p99, its process's and PostgreSQL's CPU ms per request. */
export const figures = (m: Measured): string[] =>
  [m.rps, m.p50, m.p99].map((n) => fmt(n)).concat(fmt(m.cpuMs, 3), fmt(m.pgCpuMs, 3));
const side = (name: string): string[] => [`${name} req/s`, 'p50 ms', 'p99 ms', `${name} CPU ms/req`, 'PG CPU ms/req'];
/** A table of besideFloor rows, the ratio columns named by `ratios`. */
export const besideFloorTable = (ratios: string[], rows: string[][]): string =>
  table(['scenario', ...side('service'), ...side('floor'), ...ratios], rows);

/** One row of a service-beside-floor table: the figures of each, then `ratios` (the ratios, given as numbers). */
export function besideFloor(label: string, service: Measured, floor: Measured, ...ratios: number[]): string[] {
  return [label, ...figures(service), ...figures(floor), ...ratios.map((r) => fmt(r, 2))];
}

/** The line above a table of interleaved slices: `load`, then how it was sliced. */
export function slicesLine(load: string, o: { warmup: number; slices: number; sliceSeconds: number }): string {
  return `${load}, ${o.warmup} s warm-up, then ${o.slices} interleaved slices of ${o.sliceSeconds} s per target (the first 0.5 s left out).`;
}

/** The closing lines: the machine, the load average around the run, and failures if any. */
export async function footer(databaseUrl: string, failures: number): Promise<void> {
  const { rows } = await onServer(databaseUrl, (db) => db.query<{ server_version: string }>('SHOW server_version'));
  const machine = `${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, PostgreSQL ${rows[0]?.server_version}`;
  log();
  log(`Machine: ${machine}. Load average (1 min): ${fmt(LOAD_AT_START, 2)} at start, ${fmt(load1(), 2)} at end.`);
  if (failures > 0) log(`WARNING: ${failures} requests failed (non-2xx, errors or time-outs); the figures are suspect`);
}
