interface Pending {
  count: number;
  wake?: () => void;
}

/**
 * Counts the API processes that confirmed a credential change (each listener acknowledges every
 * change it applied), so the process that made it can answer only once every cache dropped the old
 * entry. Counting starts before the commit, as an acknowledgement may arrive before the commit returns.
 */
export class ChangeAcknowledgements {
  private readonly pending = new Map<string, Pending>();

  expect(change: string): void {
    this.pending.set(change, { count: 0 });
  }

  forget(change: string): void {
    this.pending.delete(change);
  }

  received(change: string): void {
    const pending = this.pending.get(change);
    if (!pending) return;
    pending.count += 1;
    pending.wake?.();
  }

  /** True once `expected` acknowledgements arrived, false after `timeoutMs`; stops counting either way. */
  async wait(change: string, expected: number, timeoutMs: number): Promise<boolean> {
    const pending = this.pending.get(change);
    if (!pending) return false;
    try {
      return await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        pending.wake = () => {
          if (pending.count < expected) return;
          clearTimeout(timer);
          resolve(true);
        };
        pending.wake();
      });
    } finally {
      this.forget(change);
    }
  }
}
