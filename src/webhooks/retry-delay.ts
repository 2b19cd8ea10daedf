/** Pure retry arithmetic for webhook deliveries; no Nest, no Bull, no clock of its own. */

export const JITTER = 0.2;
export const MAX_RETRY_AFTER_MS = 3_600_000;

export type Random = () => number;

/** ±20% jitter, never below 1 ms (a zero delay makes Bull retry without a delay). */
export function withJitter(delayMs: number, random: Random = Math.random): number {
  return Math.max(1, Math.round(delayMs * (1 - JITTER + 2 * JITTER * random())));
}

/** Retry-After as seconds or an HTTP date, in milliseconds from now; null when absent or unreadable. */
export function parseRetryAfter(header: string | undefined, now: number): number | null {
  if (header === undefined) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  if (Number.isNaN(date) || !/[a-z]/i.test(value)) return null;
  return Math.max(0, date - now);
}

export interface RetryInput {
  /** Delays after the 1st, 2nd, ... failed attempt of a cycle. */
  schedule: readonly number[];
  /** Attempts made in this cycle, including the one that just failed. */
  cycleAttempts: number;
  responseStatus: number | null;
  /** From parseRetryAfter. */
  retryAfterMs: number | null;
}

/**
 * The delay before the next attempt, or null when the schedule is exhausted and the event fails.
 * A Retry-After on 429/503 wins when it is longer than the jittered delay, honoured up to one hour:
 * it can push an attempt later, never bring one earlier than the schedule.
 */
export function nextRetryDelay(input: RetryInput, random: Random = Math.random): number | null {
  if (input.cycleAttempts < 1 || input.cycleAttempts > input.schedule.length) return null;
  const scheduled = withJitter(input.schedule[input.cycleAttempts - 1], random);
  const honoursRetryAfter = input.responseStatus === 429 || input.responseStatus === 503;
  if (honoursRetryAfter && input.retryAfterMs !== null && input.retryAfterMs > scheduled) {
    return Math.max(scheduled, Math.min(input.retryAfterMs, MAX_RETRY_AFTER_MS));
  }
  return scheduled;
}
