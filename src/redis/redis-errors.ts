/** ioredis's rejection of a MULTI that Redis discarded: the refusals of its queued commands ride along. */
interface DiscardedTransaction {
  message?: unknown;
  previousErrors?: { message?: unknown }[];
}

/**
 * What Redis said, for a log line or an error: for a discarded transaction (`EXECABORT`), the
 * refusal that discarded it — such as the OOM of a Redis at `maxmemory` with `noeviction` — since
 * "Transaction discarded because of previous errors" alone names no cause.
 */
export function redisErrorMessage(error: unknown): string {
  const failure = (error ?? {}) as DiscardedTransaction;
  const message = typeof failure.message === 'string' ? failure.message : String(error);
  if (!message.startsWith('EXECABORT')) return message;
  const reasons = [...new Set((failure.previousErrors ?? []).map((previous) => String(previous.message)))];
  return reasons.length > 0 ? `${reasons.join('; ')} (Redis discarded the transaction)` : message;
}

/** The same error with the cause in its message, the original kept as its `cause`. */
export function withRedisCause(error: unknown): unknown {
  const message = redisErrorMessage(error);
  return error instanceof Error && message !== error.message ? new Error(message, { cause: error }) : error;
}
