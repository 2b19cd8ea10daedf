import autocannon from 'autocannon';

/**
 * The interleaved-slice machinery shared by bench:list and bench:transitions: every target gets a
 * warm-up, then the measured time is cut into slices run one target at a time, the order rotated
 * each slice, so the machine's drift during a run weighs on every target alike.
 */

/** What a target's slices add up to. */
export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  failures: number;
}

/**
 * A slice's first half second is left out of its figures: the load generator opens every
 * connection at once at the start of a run, and that burst is not the steady state being measured.
 * Throughput counts the responses received after it; latency only the requests sent after it, as a
 * burst request answered late would otherwise still count (docs/performance.md, "After a pause").
 */
export const SETTLE_MS = 500;

/** What the slices of one target in one scenario add up to. */
export class Tally {
  requests = 0;
  seconds = 0;
  failures = 0;
  readonly latencies: number[] = [];

  measured(): Measured {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
    return {
      rps: this.requests / this.seconds,
      p50: Math.round(at(0.5)),
      p99: Math.round(at(0.99)),
      requests: this.requests,
      failures: this.failures,
    };
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** One load run of `seconds` against one target, counted into `tally`; returns its req/s. */
export type LoadRun = (seconds: number, tally: Tally) => Promise<number>;

/**
 * One autocannon run: the responses after SETTLE_MS are counted into the tally (requests, seconds,
 * failures) and their req/s is returned; the latencies of the requests sent after SETTLE_MS too.
 */
export async function autocannonLoad(
  url: string,
  requests: autocannon.Request[],
  connections: number,
  seconds: number,
  tally: Tally,
): Promise<number> {
  const options: autocannon.Options = { url, connections, duration: seconds, requests };
  let counted = 0;
  let failed = 0;
  const startedAt = performance.now();
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const run = autocannon(options, (error: unknown, done: autocannon.Result) =>
      error ? reject(error as Error) : resolve(done),
    );
    run.on('response', (_client, status, _bytes, responseTime) => {
      const at = performance.now() - startedAt;
      if (at < SETTLE_MS) return;
      counted++;
      if (status < 200 || status > 299) failed++;
      if (at - responseTime >= SETTLE_MS) tally.latencies.push(responseTime);
    });
  });
  const measuredSeconds = (performance.now() - startedAt - SETTLE_MS) / 1000;
  tally.requests += counted;
  tally.seconds += measuredSeconds;
  tally.failures += failed + result.errors + result.timeouts;
  return counted / measuredSeconds;
}

/**
 * Warm-up (each target once, into a tally nobody reads), then `slices` slices of `sliceSeconds`
 * per target, one target at a time, who goes first rotated each slice (A, B, C; then B, C, A; …).
 * Returns each target's tally and, per slice, each target's req/s.
 */
export async function interleave<Name extends string>(
  runs: readonly (readonly [Name, LoadRun])[],
  options: { warmup: number; slices: number; sliceSeconds: number },
): Promise<{ tallies: Record<Name, Tally>; perSlice: Record<Name, number>[] }> {
  for (const [, run] of runs) await run(options.warmup, new Tally());
  const tallies = Object.fromEntries(runs.map(([name]) => [name, new Tally()])) as Record<Name, Tally>;
  const perSlice: Record<Name, number>[] = [];
  for (let slice = 0; slice < options.slices; slice++) {
    const rps: Partial<Record<Name, number>> = {};
    const first = slice % runs.length;
    for (const [name, run] of [...runs.slice(first), ...runs.slice(0, first)]) {
      rps[name] = await run(options.sliceSeconds, tallies[name]);
    }
    perSlice.push(rps as Record<Name, number>);
  }
  return { tallies, perSlice };
}
