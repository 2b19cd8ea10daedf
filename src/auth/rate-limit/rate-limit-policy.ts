/** One window's count as the store reports it. */
export interface WindowCount {
  count: number;
  /** Milliseconds until this window ends. */
  resetMs: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  headers: Record<string, string>;
}

/** Every limit of the service counts in fixed one-minute windows. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * Fixed one-minute window per key. Headers follow the IETF RateLimit draft fields
 * (`RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` in seconds); a refusal adds `Retry-After`.
 */
export function decide(limit: number, window: WindowCount): RateLimitDecision {
  const resetSeconds = Math.max(1, Math.ceil(window.resetMs / 1000));
  const headers: Record<string, string> = {
    'RateLimit-Limit': String(limit),
    'RateLimit-Remaining': String(Math.max(0, limit - window.count)),
    'RateLimit-Reset': String(resetSeconds),
  };
  if (window.count <= limit) return { allowed: true, headers };
  return { allowed: false, headers: { ...headers, 'Retry-After': String(resetSeconds) } };
}

/** Milliseconds until the clock-aligned window holding `nowMs` ends. */
export function clockWindowResetMs(nowMs: number, windowMs = RATE_LIMIT_WINDOW_MS): number {
  return windowMs - (((nowMs % windowMs) + windowMs) % windowMs);
}

/** For a request that could not be counted (its credential look-up failed): the headers, nothing counted. */
export function uncounted(limit: number, nowMs: number): RateLimitDecision {
  return decide(limit, { count: 0, resetMs: clockWindowResetMs(nowMs) });
}
