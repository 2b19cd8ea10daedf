/** The pauses before each new try of an account passed over: together about the lock time-out a wait had. */
export const BUSY_RETRY_PAUSES_MS: readonly number[] = [20, 100, 400];

/**
 * Tries again, after pauses, the accounts whose promotion was under way when one of theirs was
 * asked for (`EndpointLifecycle.advanceIfFree`), until none is passed over or the pauses since the
 * account was last passed over run out: a usual promotion ends within the first, and the next try
 * sees what it did not. Nothing waits meanwhile, neither a connection nor the caller; an account has
 * at most one retry running in a process, which an account passed over again keeps going. Written
 * here rather than taken from a retry library: it retries a changing subset, not one call.
 */
export class BusyRetry {
  /** Account → when it was last passed over, while a retry of it runs. */
  private readonly passedOver = new Map<string, number>();
  private readonly horizonMs: number;

  constructor(
    private readonly promote: (accountIds: string[]) => Promise<string[]>,
    private readonly failed: (error: unknown) => void,
    private readonly pausesMs: readonly number[] = BUSY_RETRY_PAUSES_MS,
  ) {
    this.horizonMs = pausesMs.reduce((sum, pause) => sum + pause, 0);
  }

  /** Tries `accountIds` again after the pauses; an account whose retry runs is left to it, which goes on longer. */
  schedule(accountIds: string[]): void {
    const ids = [...new Set(accountIds)];
    const fresh = ids.filter((id) => !this.passedOver.has(id));
    for (const id of ids) this.passedOver.set(id, Date.now());
    if (fresh.length === 0) return;
    void this.run(fresh, 0)
      .catch(this.failed)
      .finally(() => fresh.forEach((id) => this.passedOver.delete(id)));
  }

  /** How many accounts have a retry running. */
  get size(): number {
    return this.passedOver.size;
  }

  private async run(accountIds: string[], step: number): Promise<void> {
    const recent = (id: string) => Date.now() - (this.passedOver.get(id) ?? 0) < this.horizonMs;
    const left = step < this.pausesMs.length ? accountIds : accountIds.filter(recent);
    if (left.length === 0) return;
    const pause = this.pausesMs[Math.min(step, this.pausesMs.length - 1)];
    await new Promise((resolve) => setTimeout(resolve, pause).unref());
    await this.run(await this.promote(left), step + 1);
  }
}
