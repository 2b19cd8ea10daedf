export const JITTER = 0.2;
export type Random = () => number;

/** ±20% jitter, never below 1 ms (a zero delay makes Bull retry without a delay). */
export function withJitter(delayMs: number, random: Random = Math.random): number {
  return Math.max(1, Math.round(delayMs * (1 - JITTER + 2 * JITTER * random())));
}

/**
 * Bull keeps the stack of the error that ended a run, and the dashboard shows it under the reason:
 * for the processor's own verdicts it would be source paths and line numbers, not information.
 */
function reasonOnly(error: Error): string {
  return `${error.name}: ${error.message}`;
}

/**
 * Thrown by the processor to have Bull run the job again after `delayMs`: a scheduled retry, or a
 * deferral when the account has too many deliveries in flight (not an attempt).
 */
export class DeliveryRetry extends Error {
  constructor(
    readonly delayMs: number,
    message: string,
  ) {
    super(message);
    this.name = 'DeliveryRetry';
    this.stack = reasonOnly(this);
  }
}

/**
 * Thrown by the processor when a cycle is over without a delivery (the schedule is used up, or the
 * account has no webhook URL): Bull moves the job to failed at once, with the message as its reason.
 */
export class DeliveryGaveUp extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DeliveryGaveUp';
    this.stack = reasonOnly(this);
  }
}

/** Bull's backoff answer for "do not retry": the job goes to failed. */
const NO_RETRY = -1;

/** For unexpected failures (database down): back off from 1 s up to a minute. */
function fallbackDelay(attemptsMade: number): number {
  return withJitter(Math.min(60_000, 1_000 * 2 ** Math.min(attemptsMade, 6)));
}

/** Bull's custom backoff strategy: Bull hands it the error the processor threw. */
export function retryBackoff(attemptsMade: number, err?: Error): number {
  if (err instanceof DeliveryGaveUp) return NO_RETRY;
  const delay = (err as Partial<DeliveryRetry> | undefined)?.delayMs;
  return typeof delay === 'number' && Number.isFinite(delay) && delay >= 1
    ? Math.round(delay)
    : fallbackDelay(attemptsMade);
}
