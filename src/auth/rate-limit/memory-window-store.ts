import { clockWindowResetMs, RATE_LIMIT_WINDOW_MS, type WindowCount } from 'src/auth/rate-limit/rate-limit-policy';

/** Keys one store holds per window: about a megabyte at most. */
export const MEMORY_STORE_MAX_KEYS = 10_000;

/**
 * Per-process fixed-window counts, the fallback while Redis does not answer. Windows are clock
 * minutes and the whole map is dropped when one rolls, so nothing outlives its minute.
 */
export class MemoryWindowStore {
  private readonly counts = new Map<string, number>();
  private windowEndMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly maxKeys = MEMORY_STORE_MAX_KEYS,
    private readonly windowMs = RATE_LIMIT_WINDOW_MS,
  ) {}

  /** Counts one hit of `key` in the window holding `nowMs`. */
  hit(key: string, nowMs: number): WindowCount {
    const resetMs = clockWindowResetMs(nowMs, this.windowMs);
    const windowEndMs = nowMs + resetMs;
    if (windowEndMs !== this.windowEndMs) {
      this.counts.clear();
      this.windowEndMs = windowEndMs;
    }
    const current = this.counts.get(key);
    if (current === undefined && this.counts.size >= this.maxKeys) {
      // Full: a new key is over any limit. Evicting instead would let a spray of addresses wipe the
      // count of the one being guessed from. Refusing costs a valid credential nothing (auth counts
      // failures only), and accounts are counted in a store of their own (WindowCounter), so a
      // spray of addresses cannot lock clients out.
      return { count: Number.POSITIVE_INFINITY, resetMs };
    }
    const count = (current ?? 0) + 1;
    this.counts.set(key, count);
    return { count, resetMs };
  }

  /** Adds `amount` to `key` in the window holding `nowMs` unless that would pass `limit` (then adds none). */
  take(key: string, amount: number, limit: number, nowMs: number): { taken: boolean; resetMs: number } {
    const resetMs = this.roll(nowMs);
    const current = this.counts.get(key);
    if (current === undefined && this.counts.size >= this.maxKeys) return { taken: false, resetMs };
    if ((current ?? 0) + amount > limit) return { taken: false, resetMs };
    this.counts.set(key, (current ?? 0) + amount);
    return { taken: true, resetMs };
  }

  /** Takes back `amount` a take added in the current window. */
  giveBack(key: string, amount: number, nowMs: number): void {
    this.roll(nowMs);
    const current = this.counts.get(key);
    if (current !== undefined) this.counts.set(key, Math.max(0, current - amount));
  }

  /** Drops the counts when the window holding `nowMs` is a new one; the ms until it ends. */
  private roll(nowMs: number): number {
    const resetMs = clockWindowResetMs(nowMs, this.windowMs);
    if (nowMs + resetMs !== this.windowEndMs) {
      this.counts.clear();
      this.windowEndMs = nowMs + resetMs;
    }
    return resetMs;
  }

  /** Keys counted in the current window. */
  get size(): number {
    return this.counts.size;
  }
}

/**
 * The in-memory store a key is counted in: one per scope and kind of key (`account:…`,
 * `address:…`), so a spray of source addresses can fill the address store, never the accounts'.
 */
export function fallbackStoreOf(scope: string, key: string): string {
  return `${scope}/${key.slice(0, key.indexOf(':') + 1) || key}`;
}
