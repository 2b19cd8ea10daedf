interface Entry {
  accountId: string;
  /** When the secret stops authenticating (ms since epoch), or null while it is current. */
  expiresAt: number | null;
  cachedUntil: number;
}

/**
 * Remembers recent successful credential look-ups for a short time, so a client's burst of list
 * calls costs one query per second instead of one per request. A secret's known expiry is honoured
 * exactly; a rotation in this process drops the account's entries at once, and one in another
 * process is seen within the time-to-live.
 */
export class CredentialCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): string | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    const now = this.now();
    if (entry.cachedUntil <= now || (entry.expiresAt !== null && entry.expiresAt <= now)) {
      this.entries.delete(key);
      return null;
    }
    return entry.accountId;
  }

  set(key: string, accountId: string, expiresAt: Date | null): void {
    if (this.ttlMs <= 0) return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { accountId, expiresAt: expiresAt?.getTime() ?? null, cachedUntil: this.now() + this.ttlMs });
  }

  forgetAccount(accountId: string): void {
    for (const [key, entry] of this.entries) {
      if (entry.accountId === accountId) this.entries.delete(key);
    }
  }
}
