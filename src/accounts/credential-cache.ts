interface Entry {
  accountId: string;
  /** Local clock (ms): the secret's own expiry or the max age, whichever comes first. */
  usableUntil: number;
}

export interface CredentialCacheOptions {
  maxEntries?: number;
  maxAgeMs?: number;
  now?: () => number;
}

/** How long one round trip on the listening connection proves the cache current, from when it was sent. */
export const CREDENTIAL_LEASE_MS = 1_000;

/**
 * Secret hash → account for this process, in front of the public API's credential query. It is
 * fail-safe: it answers only while trusted (the invalidation listener is connected and listening)
 * and within its lease (the listener completed a round trip sent less than CREDENTIAL_LEASE_MS ago:
 * PostgreSQL delivers every notification committed before that query ahead of its answer, so a
 * connection that went silent stops the cache within the lease, before any heartbeat time-out).
 * Every invalidation bumps `generation`, so a look-up that began before a change and ends after it
 * is not stored. Only found secrets are stored: an unknown one always goes to the database.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private currentGeneration = 0;
  private trusted = false;
  /** Local clock (ms) until which the last round trip proves the cache current. */
  private leaseUntil = 0;

  constructor(options: CredentialCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    this.maxAgeMs = options.maxAgeMs ?? 5 * 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Read before a database look-up and handed back to `set`. */
  get generation(): number {
    return this.currentGeneration;
  }

  /** The listener is up (acknowledgements of changes arrive); the lease is not part of this. */
  get isTrusted(): boolean {
    return this.trusted;
  }

  /** Trusted and within the lease: entries may answer and be stored. */
  get isCurrent(): boolean {
    return this.trusted && this.now() < this.leaseUntil;
  }

  /** A round trip sent at `sentAt` (local clock) came back: the cache is current until sentAt + lease. */
  renewLease(sentAt: number): void {
    this.leaseUntil = Math.max(this.leaseUntil, sentAt + CREDENTIAL_LEASE_MS);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The account of a usable entry; undefined when absent, expired, or the cache is not current. */
  get(hash: string): string | undefined {
    if (!this.isCurrent) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.usableUntil <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.accountId;
  }

  /**
   * Stores a found secret, unless the cache is not trusted or anything was invalidated since
   * `generation` was read. `remainingMs` is the secret's validity left as the database saw it (null:
   * no expiry), counted from `startedAt`, taken before the query, so clock skew cannot extend it.
   */
  set(hash: string, accountId: string, remainingMs: number | null, generation: number, startedAt: number): boolean {
    if (!this.isCurrent || generation !== this.currentGeneration) return false;
    const usableUntil = startedAt + Math.min(this.maxAgeMs, remainingMs ?? Infinity);
    if (usableUntil <= this.now()) return false;
    this.entries.delete(hash);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(hash, { accountId, usableUntil });
    return true;
  }

  /** The account's secrets changed: forget its entries and any look-up in flight. */
  invalidateAccount(accountId: string): void {
    this.currentGeneration += 1;
    for (const [hash, entry] of this.entries) if (entry.accountId === accountId) this.entries.delete(hash);
  }

  invalidateAll(): void {
    this.currentGeneration += 1;
    this.entries.clear();
  }

  /**
   * The listener is listening again (its LISTEN was sent at `sentAt`): start empty, as
   * notifications may have been missed meanwhile.
   */
  trust(sentAt: number): void {
    this.invalidateAll();
    this.trusted = true;
    this.leaseUntil = 0;
    this.renewLease(sentAt);
  }

  /** The listener is down: every look-up goes to the database until `trust`. */
  distrust(): void {
    this.trusted = false;
    this.leaseUntil = 0;
    this.invalidateAll();
  }
}
