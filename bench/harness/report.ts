import { loadavg } from 'node:os';
import type { Measured } from './slices';

/** How every bench reports: lines on stdout, Markdown tables, one PASS/FAIL line per target. */

export function log(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function fmt(n: number, digits = 0): string {
  return Number.isFinite(n)
    ? n.toLocaleString('en', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
}

export function load1(): number {
  return loadavg()[0] ?? NaN;
}

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}

/** A target's line: PASS or FAIL, what was asked, what was measured. */
export function verdict(ok: boolean, text: string): string {
  return `${ok ? 'PASS' : 'FAIL'}  ${text}`;
}

/** One row of the service-beside-floor table: req/s, p50, p99 and CPU per request of each, and the ratio. */
export function besideFloor(label: string, service: Measured, floor: Measured, sliceRatio: number): string[] {
  const side = (m: Measured): string[] => [fmt(m.rps), fmt(m.p50), fmt(m.p99), fmt(m.cpuUsPerRequest)];
  return [label, ...side(service), ...side(floor), fmt(service.rps / floor.rps, 2), fmt(sliceRatio, 2)];
}

const SIDE = ['p50 ms', 'p99 ms', 'CPU µs/req'];
export const BESIDE_FLOOR_HEADER = [
  'scenario',
  'service req/s',
  ...SIDE,
  'floor req/s',
  ...SIDE,
  'service / floor',
  'median slice ratio',
];

/** The line above a table of interleaved slices: `load`, then how it was sliced. */
export function slicesLine(load: string, o: { warmup: number; slices: number; sliceSeconds: number }): string {
  return `${load}, ${o.warmup} s warm-up, then ${o.slices} interleaved slices of ${o.sliceSeconds} s per target (the first 0.5 s left out).`;
}

/** The closing lines: the machine, the load average around the run, and failures if any. */
export function footer(machine: string, loadAtStart: number, failures: number): void {
  log();
  log(`Machine: ${machine}. Load average (1 min): ${fmt(loadAtStart, 2)} at start, ${fmt(load1(), 2)} at end.`);
  if (failures > 0) log(`WARNING: ${failures} requests failed (non-2xx, errors or time-outs); the figures are suspect`);
}
