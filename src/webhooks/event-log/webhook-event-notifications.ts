import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { reconnectDelayMs } from 'src/accounts/credential-changes';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { EVENTS_CHANNEL } from 'src/webhooks/queue/event-announcer';
import { LOOKBACK_MS } from 'src/webhooks/event-log/event-stream-window';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';

/** The safety re-read and the listening connection's heartbeat, this often, while streams are open. */
const SAFETY_INTERVAL_MS = 3_000;
/** A heartbeat unanswered this long: the connection is dropped and reconnected. */
const HEARTBEAT_TIMEOUT_MS = 5_000;

export type Wake = () => void;

// PostgreSQL LISTEN/NOTIFY rather than Redis pub/sub: streams keep going while Redis is down, as
// the public API does, and a wake-up goes through the same server as the event it announces (sent
// after its commit, by EventAnnouncer).
/**
 * Wakes this process's open streams when their account gets events, whichever process committed
 * them: one LISTEN connection per process (opened with the first stream), not one per stream. A
 * notification only says "read the log": each stream reads it itself, so a lost notification is
 * found by the safety re-read (every SAFETY_INTERVAL_MS, one statement for every account with an
 * open stream) or by the read every stream does when the connection comes back.
 */
@Injectable()
export class WebhookEventNotifications implements OnApplicationShutdown {
  private readonly logger = new Logger(WebhookEventNotifications.name);
  private readonly subscribers = new Map<string, Set<Wake>>();
  private client?: Client;
  private failures = 0;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private safetyTimer?: NodeJS.Timeout;
  private ticking = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: WebhookEventRepository,
  ) {}

  /** Calls `wake` whenever the account may have new events; returns the unsubscribe. */
  subscribe(accountId: string, wake: Wake): () => void {
    if (!this.client && !this.retryTimer && !this.stopped) void this.connect();
    this.safetyTimer ??= setInterval(() => void this.tick(), SAFETY_INTERVAL_MS).unref();
    const wakes = this.subscribers.get(accountId) ?? new Set<Wake>();
    wakes.add(wake);
    this.subscribers.set(accountId, wakes);
    return () => {
      wakes.delete(wake);
      if (wakes.size === 0 && this.subscribers.get(accountId) === wakes) this.subscribers.delete(accountId);
    };
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.safetyTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private wake(accountId: string): void {
    for (const wake of this.subscribers.get(accountId) ?? []) wake();
  }

  private async connect(): Promise<void> {
    this.retryTimer = undefined;
    const client = new Client({
      connectionString: this.config.databaseUrl,
      application_name: 'kyc-event-stream-listener',
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
    });
    this.client = client;
    client.on('notification', ({ payload }) => {
      for (const accountId of payload?.split(',') ?? []) this.wake(accountId);
    });
    client.on('error', (error) => this.lost(client, error.message));
    client.on('end', () => this.lost(client, 'connection closed'));
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (error) {
      return this.lost(client, (error as Error).message);
    }
    if (client !== this.client) return;
    if (this.failures > 0) this.logger.log('event stream listener reconnected');
    this.failures = 0;
    // Whatever was notified while not listening: every stream reads once.
    for (const accountId of this.subscribers.keys()) this.wake(accountId);
  }

  /** The heartbeat of the listening connection, and the safety re-read of accounts with open streams. */
  private async tick(): Promise<void> {
    if (this.ticking || this.subscribers.size === 0) return;
    this.ticking = true;
    try {
      const client = this.client;
      if (client) {
        const deadline = setTimeout(() => this.lost(client, 'heartbeat unanswered'), HEARTBEAT_TIMEOUT_MS).unref();
        await client.query('SELECT 1').catch((error: Error) => this.lost(client, `heartbeat failed: ${error.message}`));
        clearTimeout(deadline);
      }
      const accounts = [...this.subscribers.keys()];
      const active = await this.events.withEventsSince(accounts, new Date(Date.now() - LOOKBACK_MS));
      for (const accountId of active) this.wake(accountId);
    } catch (error) {
      this.logger.warn(`event stream safety re-read failed: ${(error as Error).message}`);
    } finally {
      this.ticking = false;
    }
  }

  private lost(client: Client, reason: string): void {
    if (client !== this.client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    const delay = reconnectDelayMs(this.failures);
    this.failures += 1;
    this.logger.warn(
      `event stream listener down (${reason}); streams rely on the safety re-read; retry in ${delay} ms`,
    );
    this.retryTimer = setTimeout(() => void this.connect(), delay).unref();
  }
}
