/** The pauses before each new try of an account passed over: together about the lock time-out a wait had. */
export const BUSY_RETRY_PAUSES_MS: readonly number[] = [20, 100, 400];

/**
 * Tries again, after pauses, the accounts whose promotion was under way when one of theirs was
 * asked for (`EndpointLifecycle.advanceIfFree`): a usual promotion ends within the first pause, and
 * the next try sees what it did not. An account still passed over is tried until the pauses run
 * out; one passed over again while a try of it ran (which could not see why) is tried once more,
 * whatever the pauses. Nothing waits meanwhile, neither a connection nor the caller; an account has
 * at most one retry running in a process. Written here rather than taken from a retry library: it
 * retries a changing subset of accounts, not one call.
 */
export class BusyRetry {
  /** Account → the mark of its last pass-over, while a retry of it runs. Marks count up; a clock could tie or step back. */
  private readonly passedOver = new Map<string, number>();
  private mark = 0;
  private stopped = false;

  constructor(
    private readonly promote: (accountIds: string[]) => Promise<string[]>,
    private readonly failed: (error: unknown) => void,
    private readonly pausesMs: readonly number[] = BUSY_RETRY_PAUSES_MS,
  ) {}

  /** Tries `accountIds` again after the pauses; an account whose retry runs is left to it. */
  schedule(accountIds: string[]): void {
    if (this.stopped) return;
    const ids = [...new Set(accountIds)];
    const fresh = ids.filter((id) => !this.passedOver.has(id));
    for (const id of ids) this.passedOver.set(id, ++this.mark);
    if (fresh.length > 0) void this.run(fresh).catch(this.failed);
  }

  /** No new try from now on (a stopping process: the sweeper of a running one lets the rest through). */
  stop(): void {
    this.stopped = true;
  }

  /** How many accounts have a retry running. */
  get size(): number {
    return this.passedOver.size;
  }

  private async run(accountIds: string[]): Promise<void> {
    const mine = new Set(accountIds);
    const leave = (id: string): void => {
      mine.delete(id);
      this.passedOver.delete(id);
    };
    try {
      for (let step = 0; mine.size > 0 && !this.stopped; step += 1) {
        const pause = this.pausesMs[Math.min(step, this.pausesMs.length - 1)] ?? 0;
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
        if (this.stopped) return;
        const startedAt = ++this.mark;
        const busy = new Set(await this.promote([...mine]));
        const more = step + 1 < this.pausesMs.length;
        // Passed over after this try began, an account is tried once more: the try could not see why.
        for (const id of mine) {
          if (!(busy.has(id) && more) && (this.passedOver.get(id) ?? 0) < startedAt) leave(id);
        }
      }
    } finally {
      for (const id of mine) leave(id);
    }
  }
}
