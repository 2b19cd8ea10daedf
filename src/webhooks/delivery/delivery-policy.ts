import type { DisableReason } from 'src/webhooks/tables/webhook-endpoint.entity';
import type { DeliveryStatus } from 'src/webhooks/tables/webhook-event.entity';
import { type Random, withJitter } from 'src/webhooks/queue/delivery-retry';

/**
 * The delivery policy, pure (no Nest, no Bull, no clock of its own): what an attempt's result comes
 * to (delivered, retried when, failed, held), and whether it disables the endpoint. The processor acts
 * on these decisions; Bull's side of "retry later" and "give up" is queue/delivery-retry.ts.
 */

export const MAX_RETRY_AFTER_MS = 3_600_000;

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

/** What one attempt's HTTP exchange came to, as the decision needs it. */
export interface AttemptResult {
  /** null on a network error or time-out. */
  responseStatus: number | null;
  /** null on success (a 2xx within the time-out). */
  error: string | null;
  /** The response's Retry-After header, if any. */
  retryAfter: string | undefined;
}

export type AttemptOutcome =
  { kind: 'delivered' } | { kind: 'retry'; delayMs: number; at: Date } | { kind: 'failed' } | { kind: 'held' };

export interface OutcomeInput {
  result: AttemptResult;
  /** Attempts made in this delivery cycle, including this one. */
  cycleAttempts: number;
  /** Delays after the 1st, 2nd, ... failed attempt of a cycle (WEBHOOK_RETRY_SCHEDULE). */
  schedule: readonly number[];
  now: Date;
}

/**
 * An attempt's outcome: delivered on success; held on HTTP 410 Gone (the endpoint is disabled, no
 * retry); otherwise a retry at the scheduled (jittered) time, pushed later by a longer Retry-After
 * on 429/503 (up to an hour), or failed once the schedule is used up.
 */
export function decideOutcome(input: OutcomeInput, random: Random = Math.random): AttemptOutcome {
  const { result, now } = input;
  if (result.error === null) return { kind: 'delivered' };
  if (result.responseStatus === 410) return { kind: 'held' };
  const delayMs = nextRetryDelay(
    {
      schedule: input.schedule,
      cycleAttempts: input.cycleAttempts,
      responseStatus: result.responseStatus,
      retryAfterMs: parseRetryAfter(result.retryAfter, now.getTime()),
    },
    random,
  );
  if (delayMs === null) return { kind: 'failed' };
  return { kind: 'retry', delayMs, at: new Date(now.getTime() + delayMs) };
}

export interface DisableInput {
  outcome: AttemptOutcome['kind'];
  /** The endpoint's `failing_since` once this attempt is recorded (null if an attempt succeeded since). */
  failingSince: Date | null;
  now: Date;
  /** WEBHOOK_DISABLE_AFTER in ms; 0 never disables for failing. */
  disableAfterMs: number;
}

/**
 * Whether an attempt disables its endpoint, and why: at once on HTTP 410 (the attempt's outcome is
 * `held`), or when the attempt used up its event's schedule while the endpoint has been failing for
 * longer than WEBHOOK_DISABLE_AFTER (strictly longer: failing exactly that long is not yet too long).
 */
export function endpointDisableReason(input: DisableInput): DisableReason | null {
  if (input.outcome === 'held') return 'gone';
  if (input.outcome !== 'failed' || input.disableAfterMs <= 0 || input.failingSince === null) return null;
  return input.now.getTime() - input.failingSince.getTime() > input.disableAfterMs ? 'failing' : null;
}

/** A job picked up this much before its event is due waits instead (an early duplicate). */
export const EARLY_TOLERANCE_MS = 1_000;

/** What a job's event row says of it before any attempt (the fields the decision reads). */
export type JobEvent = {
  cycle: number;
  deliveryStatus: DeliveryStatus;
  cycleAttempts: number;
  nextAttemptAt: Date | null;
  disabledAt: Date | null;
};

/** What a job does before any attempt. */
export type JobStep<E extends JobEvent> =
  /** The event is gone, the job is of another cycle, or the event is held or waiting its turn (its
   * release queues a job of its own when it is due). */
  | { step: 'skip' }
  /** Run again after its cycle was delivered (a worker died before Bull heard the end). */
  | { step: 'delivered' }
  /** The cycle failed: run again after it ended, or (no attempt) the account had no webhook_url
   * when the event was created. A job run again after a worker died mid-job may count it twice. */
  | { step: 'give-up'; event: E; noAttempt: boolean }
  /** The endpoint is disabled: nothing is sent, the event waits for it. */
  | { step: 'hold'; event: E }
  /** Picked up early (a duplicate job): it runs again when the event is due. */
  | { step: 'not-due'; delayMs: number }
  /** An attempt; a new cycle's first one first takes the previous cycle's job off the dashboard. */
  | { step: 'attempt'; event: E; retirePrevious: boolean };

/** The job of `cycle` for `event` as loaded (undefined: gone), at `now` (ms). The row decides, never the job. */
export function jobStep<E extends JobEvent>(event: E | undefined, cycle: number, now: number): JobStep<E> {
  if (!event || event.cycle !== cycle) return { step: 'skip' };
  if (event.deliveryStatus === 'delivered') return { step: 'delivered' };
  if (event.deliveryStatus === 'failed') return { step: 'give-up', event, noAttempt: event.cycleAttempts === 0 };
  if (event.deliveryStatus === 'held' || event.nextAttemptAt === null) return { step: 'skip' };
  if (event.disabledAt !== null) return { step: 'hold', event };
  const early = event.nextAttemptAt.getTime() - now;
  if (early > EARLY_TOLERANCE_MS) return { step: 'not-due', delayMs: early };
  return { step: 'attempt', event, retirePrevious: event.cycle > 1 && event.cycleAttempts === 0 };
}
