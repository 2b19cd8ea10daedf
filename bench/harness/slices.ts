import { cpuSeconds, postgresCpuSeconds } from './processes';

/**
 * The interleaved slices every bench measures in: each target gets a warm-up, then the measured
 * time is cut into slices run one target at a time, who goes first rotated each slice, so the
 * machine's drift weighs on every target alike. Per target: req/s, latency percentiles, failures,
 * and CPU per request (user + system, from /proc) of the target process and of all of PostgreSQL,
 * which only the target loads while its slice runs.
 */

/** req/s, latency percentiles (ms), requests, failures, and CPU ms per request of the target process and of PostgreSQL. */
export type Measured = Record<'rps' | 'p50' | 'p99' | 'requests' | 'failures' | 'cpuMs' | 'pgCpuMs', number>;

export function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** What the slices of one target add up to; `pid` is the process whose CPU is counted. */
export class Tally {
  requests = 0;
  seconds = 0;
  failures = 0;
  cpu = 0;
  pgCpu = 0;
  readonly latencies: number[] = [];
  private cpuFrom = [NaN, NaN];

  constructor(readonly pid?: number) {}

  /** Start counting the process's CPU (at the end of the settle time). */
  markCpu(): void {
    this.cpuFrom = [cpuSeconds(this.pid), postgresCpuSeconds()];
  }

  /** Counts one load run's requests over its seconds, and the CPU since markCpu(); returns its req/s. */
  add(requests: number, seconds: number, failures: number): number {
    this.cpu += cpuSeconds(this.pid) - (this.cpuFrom[0] as number);
    this.pgCpu += postgresCpuSeconds() - (this.cpuFrom[1] as number);
    this.requests += requests;
    this.seconds += seconds;
    this.failures += failures;
    return requests / seconds;
  }

  measured(): Measured {
    return {
      rps: this.requests / this.seconds,
      p50: percentile(this.latencies, 0.5),
      p99: percentile(this.latencies, 0.99),
      requests: this.requests,
      failures: this.failures,
      cpuMs: (this.cpu / this.requests) * 1e3,
      pgCpuMs: (this.pgCpu / this.requests) * 1e3,
    };
  }
}

/** One load run of `seconds` against one target, counted into `tally`; returns its req/s. */
export type LoadRun = (seconds: number, tally: Tally) => Promise<number>;

export type SliceTarget<Name extends string> = { name: Name; pid?: number; run: LoadRun };

/** Per slice and target: req/s and the CPU ms per request (the target's, PostgreSQL's) of that slice alone. */
export type SliceFigures = Pick<Measured, 'rps' | 'cpuMs' | 'pgCpuMs'>;

/**
 * Warm-up (each target once, not counted), then `slices` slices of `sliceSeconds` per target, one
 * target at a time, who goes first rotated each slice (A, B, C; then B, C, A; …).
 */
export async function interleave<Name extends string>(
  targets: readonly SliceTarget<Name>[],
  options: { warmup: number; slices: number; sliceSeconds: number },
): Promise<{ measured: Record<Name, Measured>; perSlice: Record<Name, SliceFigures>[] }> {
  for (const target of targets) await target.run(options.warmup, new Tally(target.pid));
  const tallies = new Map(targets.map((target) => [target.name, new Tally(target.pid)]));
  const perSlice: Record<Name, SliceFigures>[] = [];
  for (let slice = 0; slice < options.slices; slice++) {
    const figures: Partial<Record<Name, SliceFigures>> = {};
    const first = slice % targets.length;
    for (const target of [...targets.slice(first), ...targets.slice(0, first)]) {
      const tally = tallies.get(target.name) as Tally;
      const [requests, cpu, pgCpu] = [tally.requests, tally.cpu, tally.pgCpu];
      const rps = await target.run(options.sliceSeconds, tally);
      const perRequest = (seconds: number): number => (seconds / (tally.requests - requests)) * 1e3;
      figures[target.name] = { rps, cpuMs: perRequest(tally.cpu - cpu), pgCpuMs: perRequest(tally.pgCpu - pgCpu) };
    }
    perSlice.push(figures as Record<Name, SliceFigures>);
  }
  const measured = Object.fromEntries(targets.map((t) => [t.name, tallies.get(t.name)?.measured()]));
  return { measured: measured as Record<Name, Measured>, perSlice };
}
