import { type Random, nextRetryDelay, parseRetryAfter } from 'src/webhooks/retry-delay';

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
