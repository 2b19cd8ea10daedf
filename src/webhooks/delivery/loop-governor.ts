import { laneOf } from 'src/webhooks/queue/delivery-job';

/**
 * Maintenance deliveries (a retention pass's webhooks, bulk replays, a backlog the relay drains) give
 * way to everything else the process does: in a process that also serves the API (APP_ROLE=all), a
 * burst of them run back to back made every request on its event loop wait (docs/performance.md).
 *
 * So maintenance deliveries in flight are capped, and the cap follows the event loop's lag, as a
 * congestion window does: a tick (every TICK_MS) late by more than BUSY_LAG_MS (WORKER_BUSY_LAG_MS in a
 * worker process) means the loop had that much work queued, and the cap halves; each tick on time
 * while the cap is in use raises it by one, up to WEBHOOK_CONCURRENCY. A delivery held MAX_HOLD_MS starts anyway: maintenance goes on however busy
 * the process, and a job holds its worker slot no longer; when the worker stops, every held one starts,
 * so it ends within the stop's bound as the others do. Fresh deliveries never wait here, though a
 * held maintenance job keeps its Bull slot meanwhile. With nothing else to do, the loop keeps up and
 * maintenance runs at the rate deliveries run.
 *
 * Written by hand: this is a few lines over the process's own timer, and no library paces one kind
 * of work by the event loop's lag.
 */
export const TICK_MS = 10;
export const BUSY_LAG_MS = 3;
/**
 * The threshold in a process that serves no requests (APP_ROLE=worker): there lateness stands for the
 * machine's other work, not for requests waiting on this loop. At 3 ms a Redis outage's backlog
 * drained at 0.43-0.57 x the steady delivery rate on a quiet machine, at 4 ms 0.88-1.11 x, with
 * another client's list p99 while draining 1.44-2.88 x and 1.61-1.99 x (docs/performance.md).
 */
export const WORKER_BUSY_LAG_MS = 4;
export const MAX_HOLD_MS = 500;
/** The cap a governor starts with, and never goes under. */
export const FIRST_CAP = 2;

export interface GovernorClock {
  now(): number;
  /** Calls `tick` every `ms` until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
}

const realClock: GovernorClock = {
  now: () => performance.now(),
  every: (ms, tick) => {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

export class LoopGovernor {
  private readonly held: { start: () => void; since: number }[] = [];
  private stopTicking?: () => void;
  private lastTick = 0;
  private cap = FIRST_CAP;
  private running = 0;
  private released = false;

  constructor(
    private readonly maxCap: number,
    private readonly clock: GovernorClock = realClock,
    private readonly busyLagMs = BUSY_LAG_MS,
  ) {}

  /** Runs a delivery job's work: a maintenance job's once the governor lets it start, any other at once. */
  deliver<T>(opts: { priority?: number } | undefined, work: () => Promise<T>): Promise<T> {
    return laneOf(opts) === 'maintenance' ? this.run(work) : work();
  }

  /** Runs `delivery` once the governor lets it start (counted as running from the tick that lets it). */
  async run<T>(delivery: () => Promise<T>): Promise<T> {
    if (!this.released && (this.running >= this.cap || this.held.length > 0))
      await new Promise<void>((start) => this.held.push({ start, since: this.clock.now() }));
    else this.running += 1;
    this.ensureTicking();
    try {
      return await delivery();
    } finally {
      this.running -= 1;
    }
  }

  /**
   * The worker stops: the held deliveries start now, and later ones at once, so that all of them end
   * within the stop's bound (WEBHOOK_TIMEOUT_MS) rather than up to MAX_HOLD_MS after it.
   */
  releaseAll(): void {
    this.released = true;
    while (this.held.length > 0) this.start();
  }

  /** The current cap on maintenance deliveries in flight, and how many wait for it. */
  get state(): { cap: number; running: number; waiting: number } {
    return { cap: this.cap, running: this.running, waiting: this.held.length };
  }

  private ensureTicking(): void {
    if (this.stopTicking) return;
    this.lastTick = this.clock.now();
    this.stopTicking = this.clock.every(TICK_MS, () => this.tick());
  }

  private tick(): void {
    const now = this.clock.now();
    const late = now - this.lastTick - TICK_MS;
    this.lastTick = now;
    if (late > this.busyLagMs) this.cap = Math.max(FIRST_CAP, Math.floor(this.cap / 2));
    else if (this.running >= this.cap) this.cap = Math.min(this.maxCap, this.cap + 1);
    for (let free = this.cap - this.running; this.held.length > 0; free -= 1) {
      if (free <= 0 && now - this.held[0].since < MAX_HOLD_MS) break;
      this.start();
    }
    if (this.held.length === 0 && this.running === 0) {
      this.stopTicking?.();
      this.stopTicking = undefined;
    }
  }

  /** Lets the longest-held delivery start. */
  private start(): void {
    const next = this.held.shift();
    if (!next) return;
    this.running += 1;
    next.start();
  }
}
