/**
 * How much of the database a retention pass may take. A pass on a year of data has millions of rows
 * to redact or delete; run flat out, it takes the CPU, the I/O and the WAL that clients' requests
 * need (measured: the list's p99 many times higher while it ran). The budget paces it instead:
 *
 * - **a share of the time** (RETENTION_BUDGET_PERCENT): a batch that took t ms is followed by
 *   t × (100 − p) / p ms of rest, so the pass works p % of the time. The rest follows what the batch
 *   really cost: on a busy database batches take longer, and the pass backs off with them;
 * - **the standbys**: while a physical standby replays more than MAX_STANDBY_LAG_MS behind the
 *   primary, the pass waits, up to MAX_STANDBY_WAIT_MS per batch (with synchronous replication every
 *   commit waits for it; with read replicas, reads that must be fresh fall back to the primary).
 *
 * Written by hand: pacing a loop by its own measured cost is a few lines no library does for this.
 */

/** A standby this far behind holds the pass until it has caught up... */
export const MAX_STANDBY_LAG_MS = 1_000;
/** ...for at most this long before each batch (a delayed standby is always behind): then the batch runs, and the wait is logged. */
export const MAX_STANDBY_WAIT_MS = 60_000;
/** The longest rest after one batch: a batch that waited long on a lock does not stall the pass for 32 times as long (at 3 %). */
export const MAX_REST_MS = 10_000;
/** The longest single rest, so that a stop is seen soon after it is asked for. */
const REST_STEP_MS = 250;

export interface BudgetClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

const realClock: BudgetClock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** What the budget reads of the database: the replay lag of the most delayed standby, in ms (0 without one). */
export type StandbyLag = () => Promise<number>;

/** One pass's pacing: `batch` runs each batch after the rest the previous one earned. */
export class MaintenanceBudget {
  private owed = 0;
  private waitedForStandby = 0;

  constructor(
    private readonly percent: number,
    private readonly standbyLag: StandbyLag,
    private readonly keepGoing: () => boolean = () => true,
    /** Told when a standby stayed behind for MAX_STANDBY_WAIT_MS and the batch went ahead anyway. */
    private readonly onStandbyBehind: (waitedMs: number) => void = () => undefined,
    private readonly clock: BudgetClock = realClock,
  ) {}

  /** Rests what the previous batch earned and until the standbys have caught up, then runs `work`; undefined if told to stop first. */
  async batch<T>(work: () => Promise<T>): Promise<T | undefined> {
    if (!(await this.rest(this.owed)) || !(await this.waitForStandbys())) return undefined;
    const started = this.clock.now();
    const result = await work();
    this.owed = Math.min(MAX_REST_MS, ((this.clock.now() - started) * (100 - this.percent)) / this.percent);
    return result;
  }

  /** Milliseconds this pass has waited for a standby to catch up (for the pass's log line). */
  get standbyWaitMs(): number {
    return this.waitedForStandby;
  }

  private async waitForStandbys(): Promise<boolean> {
    const from = this.clock.now();
    while ((await this.standbyLag()) > MAX_STANDBY_LAG_MS) {
      if (this.clock.now() - from >= MAX_STANDBY_WAIT_MS) {
        this.onStandbyBehind(MAX_STANDBY_WAIT_MS);
        break;
      }
      if (!(await this.rest(REST_STEP_MS))) return false;
    }
    this.waitedForStandby += this.clock.now() - from;
    return true;
  }

  /** Sleeps `ms` in steps, false as soon as keepGoing says stop. */
  private async rest(ms: number): Promise<boolean> {
    const until = this.clock.now() + ms;
    for (let left = ms; left > 0; left = until - this.clock.now()) {
      if (!this.keepGoing()) return false;
      await this.clock.sleep(Math.min(left, REST_STEP_MS));
    }
    return this.keepGoing();
  }
}
