import type { BenchProcess } from '../harness/processes';
import type { GateMessage, GateReply } from './pass-gate';

/**
 * The bench's side of pass-gate.ts: the worker's pass (and its delivery jobs) go on only between
 * `resume` and `pause`; `pause` resolves once the batch and the jobs under way have ended. The
 * time in between is the pass's running time.
 */
export class PausableWorker {
  private runningMs = 0;
  private resumedAt: number | undefined = performance.now();
  private seq = 0;
  private readonly waiting = new Map<number, () => void>();

  constructor(readonly process: BenchProcess) {
    process.child.on('message', (reply: GateReply) => {
      this.waiting.get(reply.paused)?.();
      this.waiting.delete(reply.paused);
    });
  }

  /** Running time since the last call, in seconds. */
  takeRunningSeconds(): number {
    const now = performance.now();
    const ms = this.runningMs + (this.resumedAt === undefined ? 0 : now - this.resumedAt);
    this.runningMs = 0;
    if (this.resumedAt !== undefined) this.resumedAt = now;
    return ms / 1000;
  }

  resume(): void {
    if (this.resumedAt !== undefined) return;
    this.send({ gate: 'open' });
    this.resumedAt = performance.now();
  }

  async pause(): Promise<void> {
    const seq = ++this.seq;
    const paused = new Promise<void>((resolve) => this.waiting.set(seq, resolve));
    this.send({ gate: 'close', seq });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the worker did not pause within 60 s')), 60_000);
    });
    await Promise.race([paused, timeout]).finally(() => clearTimeout(timer));
    if (this.resumedAt !== undefined) this.runningMs += performance.now() - this.resumedAt;
    this.resumedAt = undefined;
  }

  private send(message: GateMessage): void {
    this.process.child.send(message);
  }
}
