import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { Client } from 'pg';
import { CredentialCache } from 'src/accounts/credential-cache';
import { ChangeAcknowledgements } from 'src/accounts/credential-acks';
import {
  CREDENTIAL_ACK_CHANNEL,
  CREDENTIAL_CHANNEL,
  LISTENER_APPLICATION_NAME,
  credentialListenerUp,
  reconnectDelayMs,
} from 'src/accounts/credential-changes';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/**
 * A round trip on the listening connection this often renews the cache's lease (CREDENTIAL_LEASE_MS,
 * twice as long, so one slow answer does not lapse it)...
 */
const HEARTBEAT_INTERVAL_MS = 500;
/** ...and one unanswered this long means the connection is dead: it is dropped and reconnected. */
const HEARTBEAT_TIMEOUT_MS = 5_000;

/**
 * Keeps this API process's credential cache honest: one dedicated connection LISTENs for
 * credential changes, invalidates the account each notification names and acknowledges it (a
 * rotation waits for every process's acknowledgement, see CredentialChangeFeed). The cache is
 * used only while that connection is up and listening, and only within the lease its last answered
 * heartbeat gives (CredentialCache): a connection gone silent stops the cache within about a second.
 * When it drops, every look-up goes to the database until a reconnect (with backoff) succeeds,
 * which starts the cache empty, as notifications were missed meanwhile.
 */
@Injectable()
export class CredentialListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CredentialListener.name);
  private client?: Client;
  private failures = 0;
  private stopped = false;
  private retryTimer?: NodeJS.Timeout;
  private heartbeatTimer?: NodeJS.Timeout;
  /** A heartbeat is in flight: the next one waits for it (pg would queue it behind). */
  private beating = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly cache: CredentialCache,
    private readonly acks: ChangeAcknowledgements,
  ) {}

  onApplicationBootstrap(): void {
    // Not awaited: until it listens, the cache is simply not used.
    void this.connect();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.heartbeatTimer);
    const client = this.client;
    this.client = undefined;
    this.cache.distrust();
    credentialListenerUp.set(0);
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({
      connectionString: this.config.databaseUrl,
      application_name: LISTENER_APPLICATION_NAME,
      connectionTimeoutMillis: 5_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.client = client;
    client.on('notification', ({ channel, payload = '' }) => this.notified(client, channel, payload));
    client.on('error', (error) => this.lost(client, error.message));
    client.on('end', () => this.lost(client, 'connection closed'));
    let listenSentAt: number;
    try {
      await client.connect();
      listenSentAt = Date.now();
      await client.query(`LISTEN ${CREDENTIAL_CHANNEL}; LISTEN ${CREDENTIAL_ACK_CHANNEL}`);
    } catch (error) {
      this.lost(client, (error as Error).message);
      return;
    }
    if (client !== this.client) return;
    this.failures = 0;
    this.beating = false;
    this.cache.trust(listenSentAt);
    credentialListenerUp.set(1);
    this.heartbeatTimer = setInterval(() => this.heartbeat(client), HEARTBEAT_INTERVAL_MS).unref();
    this.logger.log('listening for credential changes; credential cache in use');
  }

  private notified(client: Client, channel: string, payload: string): void {
    if (channel === CREDENTIAL_ACK_CHANNEL) return this.acks.received(payload);
    const accountId = payload.split(' ')[0];
    if (accountId) this.cache.invalidateAccount(accountId);
    else this.cache.invalidateAll();
    // Lost with the connection at worst: the changing process then answers after its wait.
    client.query('SELECT pg_notify($1, $2)', [CREDENTIAL_ACK_CHANNEL, payload]).catch(() => undefined);
  }

  /** Every notification committed before `SELECT 1` was sent arrives before its answer: the lease. */
  private heartbeat(client: Client): void {
    if (this.beating) return;
    this.beating = true;
    const sentAt = Date.now();
    const deadline = setTimeout(() => this.lost(client, 'heartbeat unanswered'), HEARTBEAT_TIMEOUT_MS).unref();
    client.query('SELECT 1').then(
      () => {
        clearTimeout(deadline);
        this.beating = false;
        if (client === this.client) this.cache.renewLease(sentAt);
      },
      (error: Error) => {
        // Usually the connection ended ('error' or 'end' follows); if it is still open (a cancelled
        // query), it is dropped too, so that heartbeats never stop while the listener looks up.
        clearTimeout(deadline);
        this.beating = false;
        this.lost(client, `heartbeat failed: ${error.message}`);
      },
    );
  }

  /** Stops trusting the cache at once, drops the connection and schedules a reconnect. */
  private lost(client: Client, reason: string): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.cache.distrust();
    credentialListenerUp.set(0);
    clearInterval(this.heartbeatTimer);
    // With a query in flight (an unanswered heartbeat) end() destroys the socket rather than waiting.
    void client.end().catch(() => undefined);
    if (this.stopped) return;
    const delay = reconnectDelayMs(this.failures);
    this.failures += 1;
    this.logger.warn(
      `credential listener down (${reason}); credentials are read from the database; retry in ${delay} ms`,
    );
    this.retryTimer = setTimeout(() => void this.connect(), delay).unref();
  }
}
