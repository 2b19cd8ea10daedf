import { readFileSync } from 'node:fs';
import type { Sample } from './idle-load';

/** USER_HZ: Linux reports process times in 1/100 s. */
const CLOCK_TICKS = 100;

/** What one target did around one pause, over all rounds. */
export class PauseTally {
  /** Responses to requests sent after the load phase's first 0.5 s. */
  readonly steady: number[] = [];
  /** The first response on each connection after the pause. */
  readonly firstWave: number[] = [];
  /** Responses to requests sent in the first `window` ms after the pause. */
  readonly window: number[] = [];
  /** PostgreSQL connections the target opened during the resume phases. */
  newBackends = 0;
  /** Responses other than 200, by status (0: a network error). */
  readonly failures = new Map<number, number>();
  /** The target process's CPU time (ms) and responses in the load phases, then in the resume phases. */
  readonly cpu = { load: 0, loadResponses: 0, resume: 0, resumeResponses: 0 };

  addLoad(samples: Sample[]): void {
    for (const s of samples) if (s.sentAt >= 500) this.steady.push(s.latency);
    this.countFailures(samples);
  }

  addResume(samples: Sample[], connections: number, windowMs: number): void {
    const bySend = [...samples].sort((a, b) => a.sentAt - b.sentAt);
    this.firstWave.push(...bySend.slice(0, connections).map((s) => s.latency));
    for (const s of bySend) if (s.sentAt < windowMs) this.window.push(s.latency);
    this.countFailures(samples);
  }

  private countFailures(samples: Sample[]): void {
    for (const { status } of samples)
      if (status !== 200) this.failures.set(status, (this.failures.get(status) ?? 0) + 1);
  }
}

export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

const ms = (n: number): string => (Number.isNaN(n) ? '—' : n.toFixed(0));

export function tableHeader(windowMs: number): string[] {
  return [
    `| pause s | target | steady p50 | steady p99 | first wave p50 | first wave max | first ${windowMs} ms: n | p99 | new PG connections | CPU µs/request: load | resume |`,
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
}

export function tableRow(pause: number, target: string, t: PauseTally): string {
  return (
    `| ${pause} | ${target} | ${ms(quantile(t.steady, 0.5))} | ${ms(quantile(t.steady, 0.99))} ` +
    `| ${ms(quantile(t.firstWave, 0.5))} | ${ms(Math.max(...t.firstWave))} | ${t.window.length} ` +
    `| ${ms(quantile(t.window, 0.99))} | ${t.newBackends} ` +
    `| ${ms((1000 * t.cpu.load) / t.cpu.loadResponses)} | ${ms((1000 * t.cpu.resume) / t.cpu.resumeResponses)} |` +
    [...t.failures].map(([status, n]) => ` ${n} x ${status || 'network error'}`).join('')
  );
}

/** User + system CPU time of process `pid` so far, in ms (Linux /proc; NaN elsewhere). */
export function processCpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}
