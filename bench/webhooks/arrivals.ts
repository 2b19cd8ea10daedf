import { Arrival, BenchReceiver } from './receiver';

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles (NaN when there is nothing to rank). */
export function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
  return { p50: at(0.5), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1] ?? NaN };
}

/** Waits for `expected` distinct webhooks of this window (180 s at most), then hands them over. */
export async function collect(
  receiver: BenchReceiver,
  expected: number,
  what: string,
  log: (line: string) => void,
): Promise<{ arrivals: Arrival[]; missing: number; duplicates: number }> {
  const complete = await receiver.waitForCount(expected, 180_000);
  if (!complete) log(`WARNING: ${what}: only ${receiver.count} of ${expected} webhooks arrived within 180 s`);
  // Late duplicates (at-least-once) of this window would otherwise land in the next one.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const { arrivals, duplicates } = receiver.take();
  return { arrivals, missing: Math.max(0, expected - arrivals.length), duplicates };
}
