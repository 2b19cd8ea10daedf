import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { AccountsService } from 'src/accounts/accounts.service';
import { SecretKeyring, cachedDecryptor } from 'src/accounts/secret-crypto';
import { bearerToken } from 'src/auth/bearer';
import { ApiError } from 'src/common/api-error';
import { isUuid } from 'src/common/uuid';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { EventStream, type StreamSource } from 'src/webhooks/event-log/event-stream';
import { StreamWindow } from 'src/webhooks/event-log/event-stream-window';
import { type StreamPosition, type StreamedEvent } from 'src/webhooks/tables/event-rows';
import { WebhookEventNotifications } from 'src/webhooks/event-log/webhook-event-notifications';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';
import { webhookHeaders } from 'src/webhooks/outbox/webhook-signer';

/** Under the contract's 15 s, so a proxy's idle time-out of 15 s never cuts a quiet stream. */
const KEEP_ALIVE_INTERVAL_MS = 10_000;
/** Seconds a client refused for too many streams waits: about how long a dropped one takes to be noticed. */
const STREAMS_RETRY_AFTER = '10';
/** A stream whose secret was rotated out (or expired) ends within this; a trusted credential cache answers without a query. */
const CREDENTIAL_CHECK_MS = 1_000;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** The 429 of STREAMS_PER_ACCOUNT. */
export function tooManyStreams(limit: number): ApiError {
  return new ApiError('rate_limited', `At most ${limit} open event streams per account`, [], {
    'Retry-After': STREAMS_RETRY_AFTER,
  });
}

/**
 * The event stream of GET …/webhook-events/stream: checks where it starts, counts the account's
 * open streams on this process (STREAMS_PER_ACCOUNT), and runs each as an EventStream woken by
 * WebhookEventNotifications. A view: it reads events and never writes them.
 */
@Injectable()
export class WebhookEventStreams implements OnApplicationShutdown {
  private readonly logger = new Logger(WebhookEventStreams.name);
  /** Each open stream with the secret it was opened with (in memory only, to check it is still active). */
  private readonly open = new Map<EventStream, string>();
  private readonly perAccount = new Map<string, number>();
  private readonly decrypt: (stored: string) => string;
  private readonly source: StreamSource;
  private keepAliveTimer?: NodeJS.Timeout;
  private credentialTimer?: NodeJS.Timeout;
  private checking = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly events: WebhookEventRepository,
    private readonly notifications: WebhookEventNotifications,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
  ) {
    this.decrypt = cachedDecryptor(new SecretKeyring(config.secretEncryptionKeys));
    this.source = {
      read: (accountId, read, limit) => this.events.streamPage(accountId, read, limit),
      headersOf: (event: StreamedEvent) =>
        webhookHeaders(event.id, new Date(), event.body, event.secretCiphertexts.map(this.decrypt)),
      failed: (accountId, error) =>
        this.logger.warn(`event stream of account ${accountId} ended: ${(error as Error).message}`),
    };
  }

  /** Starts the account's stream on `res`, or throws 400 (where it starts) or 429 (too many). */
  async start(
    accountId: string,
    since: string | undefined,
    lastEventId: string | undefined,
    res: Response,
  ): Promise<void> {
    const floor = await this.floorOf(accountId, since, lastEventId);
    const count = this.perAccount.get(accountId) ?? 0;
    if (count >= this.config.streamsPerAccount) throw tooManyStreams(this.config.streamsPerAccount);
    this.perAccount.set(accountId, count + 1);
    res.status(200);
    res.setHeader('content-type', 'text/event-stream');
    res.setHeader('cache-control', 'no-store');
    res.setHeader('x-accel-buffering', 'no');
    res.flushHeaders();
    const stream = new EventStream(accountId, res, new StreamWindow(floor), this.source);
    const unsubscribe = this.notifications.subscribe(accountId, () => stream.wake());
    this.open.set(stream, bearerToken(res.req) ?? '');
    this.keepAliveTimer ??= setInterval(() => this.keepAlive(), KEEP_ALIVE_INTERVAL_MS).unref();
    this.credentialTimer ??= setInterval(() => void this.checkCredentials(), CREDENTIAL_CHECK_MS).unref();
    res.once('close', () => {
      unsubscribe();
      this.open.delete(stream);
      const left = (this.perAccount.get(accountId) ?? 1) - 1;
      if (left > 0) this.perAccount.set(accountId, left);
      else this.perAccount.delete(accountId);
    });
    stream.wake();
  }

  onApplicationShutdown(): void {
    clearInterval(this.keepAliveTimer);
    clearInterval(this.credentialTimer);
    for (const stream of this.open.keys()) stream.end();
  }

  /** Where a stream starts: after the event it resumes from, or at the moment it opened. */
  private async floorOf(accountId: string, since?: string, lastEventId?: string): Promise<StreamPosition> {
    if (since !== undefined && lastEventId !== undefined) {
      throw ApiError.validation('since', 'must not be given with a Last-Event-ID header');
    }
    const field = since !== undefined ? 'since' : 'Last-Event-ID';
    const resume = since ?? lastEventId;
    if (resume === undefined) return { at: new Date(), id: NIL_UUID };
    if (!isUuid(resume)) throw ApiError.validation(field, 'must be a UUID');
    const id = resume.toLowerCase();
    // On the primary: an event just streamed from it may not be on a replica yet.
    const event = await this.events.findForAccount(this.dataSource.manager, accountId, id);
    if (!event) throw ApiError.validation(field, 'must be the id of one of your webhook events');
    return { at: event.createdAt, id };
  }

  private keepAlive(): void {
    for (const stream of this.open.keys()) stream.keepAlive();
  }

  /** Ends the streams whose secret no longer authenticates their account: one look-up per distinct secret. */
  private async checkCredentials(): Promise<void> {
    if (this.checking || this.open.size === 0) return;
    this.checking = true;
    try {
      const owners = new Map<string, Promise<string | null>>();
      for (const [stream, secret] of this.open) {
        if (!owners.has(secret)) owners.set(secret, this.accounts.accountIdForSecret(secret));
        if ((await owners.get(secret)) !== stream.accountId) stream.end();
      }
    } catch (error) {
      this.logger.warn(`event stream credential check failed: ${(error as Error).message}`);
    } finally {
      this.checking = false;
    }
  }
}
