import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';

/** The channel that wakes event streams (payload: account ids, comma-separated), on every API process. */
export const EVENTS_CHANNEL = 'kyc_webhook_events';
/** 200 account ids (36 characters and a comma each) fit well inside NOTIFY's 8,000-byte payload. */
const ACCOUNTS_PER_PAYLOAD = 200;
/**
 * At most one NOTIFY per process this often (streams are promised 1 s). Each is a commit, and every
 * listening session wakes for it: sent once per round trip, about one per status change under load,
 * it was one of two causes of the status changes' regression in bench:transitions (docs/performance.md).
 */
const MIN_INTERVAL_MS = 20;

/**
 * Tells every process's event streams which accounts have new events, after the commit that made
 * them readable, in a NOTIFY of its own. Not inside the event's transaction: PostgreSQL commits
 * transactions that NOTIFY one at a time (a database-wide lock from pre-commit to the commit's
 * flush), so a NOTIFY there would queue every status change behind every other one's commit,
 * holding its row locks. Here at most one NOTIFY per process is in flight, and one per
 * MIN_INTERVAL_MS at most; the accounts announced meanwhile go together in the next, so under load it
 * costs one small commit per interval, not one per event.
 *
 * Best effort by design: a crash between the commit and the NOTIFY, or a failed NOTIFY, only delays
 * a stream until its safety re-read (webhook-event-notifications.ts), never loses an event.
 */
@Injectable()
export class EventAnnouncer implements OnApplicationShutdown {
  private readonly logger = new Logger(EventAnnouncer.name);
  private readonly pending = new Set<string>();
  private flushing?: Promise<void>;
  private lastAt = 0;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Announces committed events of these accounts; returns at once. */
  announce(accountIds: Iterable<string>): void {
    for (const accountId of accountIds) this.pending.add(accountId);
    this.schedule();
  }

  /** Lets the announcements in flight finish (each is bounded by the statement time-out). */
  async onApplicationShutdown(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Everything announced in this turn of the event loop, or since the last NOTIFY within its interval, goes in the next. */
  private schedule(): void {
    if (this.pending.size === 0 || this.flushing) return;
    const wait = Math.min(MIN_INTERVAL_MS, this.lastAt + MIN_INTERVAL_MS - performance.now());
    this.flushing = new Promise<void>((resolve) => (wait > 0 ? setTimeout(resolve, wait) : setImmediate(resolve)))
      .then(() => this.flush())
      .finally(() => {
        this.flushing = undefined;
        this.schedule();
      });
  }

  private async flush(): Promise<void> {
    const accounts = [...this.pending];
    this.pending.clear();
    this.lastAt = performance.now();
    const payloads: string[] = [];
    for (let i = 0; i < accounts.length; i += ACCOUNTS_PER_PAYLOAD)
      payloads.push(accounts.slice(i, i + ACCOUNTS_PER_PAYLOAD).join(','));
    try {
      if (!this.dataSource.isInitialized) throw new Error('PostgreSQL not connected');
      await this.dataSource.query(`SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload`, [
        EVENTS_CHANNEL,
        payloads,
      ]);
    } catch (error) {
      this.logger.warn(
        `could not wake event streams of ${accounts.length} account(s); their safety re-read will: ${(error as Error).message}`,
      );
    }
  }
}
