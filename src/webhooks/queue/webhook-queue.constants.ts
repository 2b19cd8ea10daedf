import type { JobOptions, QueueOptions } from 'bull';

/** The one place that names the delivery queue, its job and their options. */
export const DELIVERY_QUEUE = 'webhook-deliveries';
/** A Bull queue used only to enqueue: its Redis client never buffers while disconnected. */
export const DELIVERY_PRODUCER = Symbol('DELIVERY_PRODUCER');
export const RETRY_BACKOFF = 'webhook-retry';

/** The database counts attempts; Bull only needs to keep retrying until the processor stops it. */
export const DELIVERY_JOB_OPTIONS: JobOptions = {
  attempts: 1_000_000_000,
  backoff: { type: RETRY_BACKOFF },
  removeOnComplete: { age: 3_600, count: 1_000 },
  // The Failed tab is the operators' list of dead deliveries: it keeps a week of them, of every
  // account. By age only: a cap on their number would let one account's flood push out another's.
  removeOnFail: { age: 7 * 86_400 },
  stackTraceLimit: 1,
};

/** Stalled jobs (a worker died mid-delivery) go back to waiting within about 15 seconds. */
export const DELIVERY_QUEUE_SETTINGS: NonNullable<QueueOptions['settings']> = {
  lockDuration: 10_000,
  stalledInterval: 5_000,
  maxStalledCount: 5,
  retryProcessDelay: 1_000,
};
