import http from 'node:http';
import autocannon from 'autocannon';
import { cpuSeconds } from './processes';

/**
 * The interleaved slices every bench measures in: each target gets a warm-up, then the measured
 * time is cut into slices run one target at a time, who goes first rotated each slice, so the
 * machine's drift weighs on every target alike. Per target: req/s, latency percentiles, failures
 * and the target process's CPU per request (user + system, from /proc).
 */

export interface Measured {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  failures: number;
  cpuUsPerRequest: number;
}

/**
 * A closed-loop slice's first half second is left out: the load opens every connection at once,
 * and the answers to that burst are not the steady state. Latency counts only requests sent after it.
 */
export const SETTLE_MS = 500;

/** A GET of the public API: the path and the account's Bearer secret. */
export interface ApiGet {
  path: string;
  secret: string;
}

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
  readonly latencies: number[] = [];
  private cpuFrom = NaN;

  constructor(readonly pid?: number) {}

  /** Start counting the process's CPU (at the end of the settle time). */
  markCpu(): void {
    this.cpuFrom = cpuSeconds(this.pid);
  }

  /** Add the CPU used since markCpu(). */
  addCpu(): void {
    this.cpu += cpuSeconds(this.pid) - this.cpuFrom;
  }

  measured(): Measured {
    return {
      rps: this.requests / this.seconds,
      p50: Math.round(percentile(this.latencies, 0.5)),
      p99: Math.round(percentile(this.latencies, 0.99)),
      requests: this.requests,
      failures: this.failures,
      cpuUsPerRequest: (this.cpu / this.requests) * 1e6,
    };
  }
}

/** One load run of `seconds` against one target, counted into `tally`; returns its req/s. */
export type LoadRun = (seconds: number, tally: Tally) => Promise<number>;

/** Closed loop at full speed: autocannon over the requests in turn; counted after SETTLE_MS. */
export function autocannonLoad(url: string, requests: ApiGet[], connections: number): LoadRun {
  return async (seconds, tally) => {
    let next = 0;
    let counted = 0;
    let failed = 0;
    const setupRequest = (request: autocannon.Request): autocannon.Request => {
      const r = requests[next++ % requests.length] as ApiGet;
      return { ...request, path: r.path, headers: { authorization: `Bearer ${r.secret}` } };
    };
    const startedAt = performance.now();
    const settle = setTimeout(() => tally.markCpu(), SETTLE_MS);
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      const run = autocannon(
        { url, connections, duration: seconds, requests: [{ method: 'GET', setupRequest }] },
        (error: unknown, done: autocannon.Result) => (error ? reject(error as Error) : resolve(done)),
      );
      run.on('response', (_client, status, _bytes, responseTime) => {
        const at = performance.now() - startedAt;
        if (at < SETTLE_MS) return;
        counted++;
        if (status < 200 || status > 299) failed++;
        if (at - responseTime >= SETTLE_MS) tally.latencies.push(responseTime);
      });
    });
    clearTimeout(settle);
    tally.addCpu();
    const measuredSeconds = (performance.now() - startedAt - SETTLE_MS) / 1000;
    tally.requests += counted;
    tally.seconds += measuredSeconds;
    tally.failures += failed + result.errors + result.timeouts;
    return counted / measuredSeconds;
  };
}

/** One GET on a keep-alive agent: resolves with the status (0 on a network error). */
export function get(agent: http.Agent, url: string, request: ApiGet): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request(`${url}${request.path}`, {
      agent,
      headers: { authorization: `Bearer ${request.secret}` },
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(0));
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.end();
  });
}

/**
 * Open loop at `rate` requests/s, below saturation, for latency: request i leaves at start + i/rate
 * whether or not earlier ones have answered, on keep-alive connections kept from slice to slice.
 */
export function pacedLoad(url: string, requests: ApiGet[], rate: number): LoadRun {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  let next = 0;
  return async (seconds, tally) => {
    const inFlight: Promise<void>[] = [];
    let failed = 0;
    tally.markCpu();
    const start = performance.now();
    for (let i = 0; i < seconds * rate; i++) {
      const wait = start + (i * 1000) / rate - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      const sentAt = performance.now();
      const request = requests[next++ % requests.length] as ApiGet;
      inFlight.push(
        get(agent, url, request).then((status) => {
          tally.latencies.push(performance.now() - sentAt);
          if (status < 200 || status > 299) failed++;
        }),
      );
    }
    await Promise.all(inFlight);
    tally.addCpu();
    const measuredSeconds = (performance.now() - start) / 1000;
    tally.requests += inFlight.length;
    tally.seconds += measuredSeconds;
    tally.failures += failed;
    return inFlight.length / measuredSeconds;
  };
}

export interface SliceTarget<Name extends string> {
  name: Name;
  pid?: number;
  run: LoadRun;
}

/** Per slice and target: req/s and the CPU per request of that slice alone. */
export type SliceFigures = { rps: number; cpuUsPerRequest: number };

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
      const [requests, cpu] = [tally.requests, tally.cpu];
      const rps = await target.run(options.sliceSeconds, tally);
      figures[target.name] = { rps, cpuUsPerRequest: ((tally.cpu - cpu) / (tally.requests - requests)) * 1e6 };
    }
    perSlice.push(figures as Record<Name, SliceFigures>);
  }
  const measured = Object.fromEntries(targets.map((t) => [t.name, tallies.get(t.name)?.measured()]));
  return { measured: measured as Record<Name, Measured>, perSlice };
}
