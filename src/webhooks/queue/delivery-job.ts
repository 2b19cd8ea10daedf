import type { DeliveryJobSource } from 'src/webhooks/tables/event-rows';

/** What the log lines read of an attempt's result (the HTTP client's DeliveryResult has these). */
type AttemptResult = { error: string | null; responseStatus: number | null; durationMs: number };

/**
 * What the queue dashboard shows of a delivery, so that an operator can read it without the API:
 * one job per delivery cycle of an event, named by the event type, carrying ids and display strings
 * only — never the payload or a secret. The processor reads `eventId` and `cycle` alone; the event
 * row stays the truth.
 */
export interface DeliveryJobData {
  eventId: string;
  cycle: number;
  accountId?: string;
  /** Absent for a test event, whose verification is made up. */
  verificationId?: string;
  /** `processing → approved`, or `redacted (retention)` for a `verification.redacted` event. */
  change?: string;
  /** The webhook URL's host when the cycle was queued, or `no webhook_url`. */
  target?: string;
}

export interface DeliveryJob {
  name: string;
  data: DeliveryJobData;
  opts: { jobId: string; priority?: number };
}

/**
 * Which jobs go first. `fresh`: what a client just did (a status change, a redaction it asked for,
 * a redelivery of one event, a test event), and their retries. `maintenance`: what the service
 * or a bulk action produces in quantity (retention's redactions, bulk replays and released events
 * whose turn came, the relay's backlog). Bull takes a job with a priority before every job without
 * one, so a fresh job waits behind other fresh jobs only, however many maintenance jobs wait.
 */
export type Lane = 'fresh' | 'maintenance';
export const FRESH_PRIORITY = 1;

/** The lane a queued job went in by: a fresh job carries the priority. */
export function laneOf(opts: { priority?: number } | undefined): Lane {
  return opts?.priority === FRESH_PRIORITY ? 'fresh' : 'maintenance';
}

/**
 * How many of an account's WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT delivery slots the maintenance lane may
 * take: all but a fifth (at least one), kept for the account's fresh changes, so that however much
 * maintenance traffic waits, that many of its own changes at a time go out at once instead of
 * waiting their turn behind it (more at the same moment take the next slot a maintenance delivery
 * frees: BEHIND_MAINTENANCE). With a limit of 1 there is nothing to keep back: one delivery at a
 * time, in the order events were created.
 */
export function maintenanceSlots(limit: number): number {
  return limit <= 1 ? limit : limit - Math.max(1, Math.floor(limit / 5));
}

export const TEST_JOB_NAME = 'test';
export const NO_TARGET = 'no webhook_url';

export function deliveryJobId(data: Pick<DeliveryJobData, 'eventId' | 'cycle'>): string {
  return `${data.eventId}:${data.cycle}`;
}

function hostOf(webhookUrl: string | null): string {
  if (!webhookUrl) return NO_TARGET;
  try {
    return new URL(webhookUrl).host;
  } catch {
    return 'invalid webhook_url';
  }
}

function changeOf(source: DeliveryJobSource): string | undefined {
  if (source.reason) return `redacted (${source.reason})`;
  if (!source.previousStatus && !source.status) return undefined;
  return `${source.previousStatus ?? 'new'} → ${source.status ?? 'unknown'}`;
}

export function deliveryJob(source: DeliveryJobSource, lane: Lane = 'maintenance'): DeliveryJob {
  const change = changeOf(source);
  const data: DeliveryJobData = {
    eventId: source.id,
    cycle: source.cycle,
    accountId: source.accountId,
    ...(source.test ? {} : { verificationId: source.verificationId }),
    ...(change ? { change } : {}),
    target: hostOf(source.webhookUrl),
  };
  return {
    name: source.test ? TEST_JOB_NAME : source.type,
    data,
    opts: lane === 'fresh' ? { jobId: deliveryJobId(data), priority: FRESH_PRIORITY } : { jobId: deliveryJobId(data) },
  };
}

/** `825 ms`, `5s`, `30m`, `2h`, `2h 30m`: how far off the next attempt is. */
export function formatDelay(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.round(ms / 60_000);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? `${hours}h` : `${hours}h ${rest}m`;
}

/** What one attempt came to, in the words of the delivery log (`HTTP 500`, `timeout: response`, …). */
export function attemptResultText(result: Pick<AttemptResult, 'error' | 'responseStatus'>): string {
  return result.error ?? `HTTP ${result.responseStatus}`;
}

export type AttemptEnd =
  { kind: 'delivered' } | { kind: 'retry'; delayMs: number } | { kind: 'failed' } | { kind: 'held' };

/** The job log line of one attempt: `attempt 3/8 · HTTP 500 · 120 ms · next in 30m`. */
export function attemptLogLine(number: number, maxAttempts: number, result: AttemptResult, end: AttemptEnd): string {
  const next = {
    delivered: 'delivered',
    retry: end.kind === 'retry' ? `next in ${formatDelay(end.delayMs)}` : '',
    failed: 'gave up',
    held: 'endpoint disabled, event held',
  }[end.kind];
  return `attempt ${number}/${maxAttempts} · ${attemptResultText(result)} · ${Math.round(result.durationMs)} ms · ${next}`;
}

/** The reason of a delayed job: the last error, then which attempt it was and when the next one is. */
export function retryReason(number: number, maxAttempts: number, error: string, delayMs: number): string {
  return `${error} (attempt ${number}/${maxAttempts}; next in ${formatDelay(delayMs)})`;
}

/** A job whose event waits for its disabled endpoint: it completes, and the release queues a new cycle. */
export const HELD = 'held';

/** A job whose event waits its turn (its account has the most deliveries in flight): it completes,
 * and the event's turn queues it again. */
export const WAITING = 'waiting its turn';

export const NO_URL_REASON = 'no webhook_url: the account has no endpoint, nothing was sent';

/** The reason of a failed job, from the event row: why the cycle is dead. */
export function failureReason(event: { cycleAttempts: number; lastError: string | null }): string {
  if (event.cycleAttempts === 0) return NO_URL_REASON;
  const attempts = `${event.cycleAttempts} attempt${event.cycleAttempts === 1 ? '' : 's'}`;
  return `gave up after ${attempts}: ${event.lastError ?? 'unknown error'}`;
}
