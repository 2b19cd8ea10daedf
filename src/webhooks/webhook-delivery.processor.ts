import { InjectQueue } from '@nestjs/bull';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Job, Queue } from 'bull';
import type { Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { decryptSecret } from 'src/accounts/secret-crypto';
import { webhookDeliveries, webhookDeliveryLatency } from 'src/common/metrics';
import { MicroBatcher } from 'src/common/micro-batcher';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { AccountSlots } from 'src/webhooks/account-slots';
import { DeliveryRetry } from 'src/webhooks/delivery-retry';
import { deferralDelay, nextRetryDelay, parseRetryAfter } from 'src/webhooks/retry-delay';
import { BLOCKED_ERROR, DeliveryResult, WebhookHttpClient } from 'src/webhooks/webhook-http.client';
import type { WebhookEvent } from 'src/webhooks/webhook-event.entity';
import { NO_WEBHOOK_URL } from 'src/webhooks/webhook-outbox.service';
import { DELIVERY_QUEUE, DeliveryJobData } from 'src/webhooks/webhook-queue.constants';
import { webhookHeaders } from 'src/webhooks/webhook-signer';

export type DeliveryOutcome = 'skipped' | 'delivered' | 'retry' | 'failed' | 'no_webhook_url';

/** A slot outlives the time-out by this much, so a killed worker's slot frees itself soon after. */
const SLOT_MARGIN_MS = 15_000;
/** A job picked up this much before its event is due waits instead (an early duplicate). */
const EARLY_TOLERANCE_MS = 1_000;
/** Decrypted secrets kept per ciphertext; a ciphertext always decrypts to the same secret. */
const SECRET_CACHE_SIZE = 10_000;

/** What one delivery needs, read in one round trip: the event, its account's URL and active secrets. */
type DueEvent = Pick<WebhookEvent, 'id' | 'accountId' | 'body' | 'createdAt' | 'deliveryStatus' | 'cycle' | 'cycleAttempts' | 'nextAttemptAt'> & {
  webhookUrl: string | null;
  /** Ciphertexts of the secrets that currently sign (no expiry, or expiry in the future), newest first. */
  secretCiphertexts: string[];
};

// The active-secret rule is AccountsService.activeSecrets' (and accountIdForSecret's) in SQL.
// Every delivery that reaches this step in the same turn of the event loop is read in one go.
const LOAD_SQL = `
  SELECT e.id, e.account_id AS "accountId", e.body, e.created_at AS "createdAt", e.delivery_status AS "deliveryStatus",
         e.cycle, e.cycle_attempts AS "cycleAttempts", e.next_attempt_at AS "nextAttemptAt", a.webhook_url AS "webhookUrl",
         ARRAY(SELECT s.secret_ciphertext FROM account_secrets s
                WHERE s.account_id = e.account_id AND (s.expires_at IS NULL OR s.expires_at > now())
                ORDER BY s.created_at DESC) AS "secretCiphertexts"
    FROM webhook_events e JOIN accounts a ON a.id = e.account_id
   WHERE e.id = ANY($1::uuid[])`;

/** One attempt's outcome, as the record statement takes it. */
interface AttemptRecord {
  eventId: string;
  cycle: number;
  at: Date;
  responseStatus: number | null;
  error: string | null;
  /** The event's delivery_status after this attempt. */
  status: 'pending' | 'delivered' | 'failed';
  nextAttemptAt: Date | null;
  durationMs: number;
  responseBody: string | null;
}

// One statement for a batch of attempts, so atomic without a transaction: each event's new state
// and its attempt row, or nothing for an event that moved on meanwhile (no row updated, none
// inserted). Returns the (1-based) positions of the attempts that were recorded.
const RECORD_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::integer[], $3::timestamptz[], $4::integer[], $5::varchar[], $6::varchar[],
                         $7::timestamptz[], $8::integer[], $9::varchar[])
      WITH ORDINALITY AS t(id, cycle, at, response_status, error, status, next_attempt_at, duration_ms, response_body, n)),
  updated AS (
    UPDATE webhook_events e
       SET attempt_count = e.attempt_count + 1, cycle_attempts = e.cycle_attempts + 1,
           last_attempt_at = i.at, last_response_status = i.response_status, last_error = i.error,
           delivery_status = i.status, next_attempt_at = i.next_attempt_at,
           delivered_at = CASE WHEN i.status = 'delivered' THEN now() ELSE e.delivered_at END
      FROM input i
     WHERE e.id = i.id AND e.cycle = i.cycle AND e.delivery_status = 'pending'
    RETURNING e.id, e.attempt_count, i.at, i.response_status, i.duration_ms, i.error, i.response_body, i.n),
  inserted AS (
    INSERT INTO webhook_attempts (event_id, number, at, response_status, duration_ms, error, response_body)
    SELECT id, attempt_count, at, response_status, duration_ms, error, response_body FROM updated)
  SELECT n FROM updated`;

/** Waits between tries to record a delivery that succeeded, before giving up and letting the job retry. */
const RECORD_RETRY_WAITS_MS = [200, 1_000, 3_000];

function outcomeLabel(result: DeliveryResult): string {
  if (result.error === null) return 'delivered';
  if (result.error === 'timeout') return 'timeout';
  if (result.error === BLOCKED_ERROR) return 'blocked';
  return result.responseStatus === null ? 'network_error' : 'http_error';
}

/**
 * Delivers one event per job. The event row decides: a job for an event that is gone, no longer
 * pending or of an older delivery cycle does nothing. Every attempt is written before the job ends.
 */
@Injectable()
export class WebhookDeliveryProcessor {
  private readonly logger = new Logger(WebhookDeliveryProcessor.name);
  private readonly http: WebhookHttpClient;
  private slots?: AccountSlots;
  private readonly secrets = new Map<string, string>();
  private readonly loads = new MicroBatcher<string, DueEvent | undefined>((ids) => this.loadMany(ids));
  // A delivery whose record fails may be POSTed again, so one bad attempt must not fail the batch.
  // Two attempts of one event never share a statement: with both in one UPDATE … FROM, PostgreSQL
  // would apply either, and a retry could overwrite a delivery. The later one goes in the next batch.
  private readonly records = new MicroBatcher<AttemptRecord, boolean>((attempts) => this.recordMany(attempts), {
    isolateFailures: true,
    keyOf: (attempt) => attempt.eventId,
  });

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectQueue(DELIVERY_QUEUE) private readonly queue: Queue<DeliveryJobData>,
  ) {
    this.http = new WebhookHttpClient({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivateTargets });
  }

  private accountSlots(): AccountSlots {
    this.slots ??= new AccountSlots(
      this.queue.client as unknown as Redis,
      this.config.queuePrefix,
      this.config.webhookMaxInFlightPerAccount,
      this.config.webhookTimeoutMs + SLOT_MARGIN_MS,
    );
    return this.slots;
  }

  async process(job: Job<DeliveryJobData>): Promise<DeliveryOutcome> {
    const { eventId, cycle } = job.data;
    const event = await this.loads.submit(eventId);
    if (!event || event.deliveryStatus !== 'pending' || event.cycle !== cycle) return 'skipped';
    const early = (event.nextAttemptAt?.getTime() ?? 0) - Date.now();
    if (early > EARLY_TOLERANCE_MS) throw new DeliveryRetry(early, 'not due yet');
    const slot = `${job.id}:${randomUUID()}`;
    if (!(await this.accountSlots().acquire(event.accountId, slot))) {
      throw new DeliveryRetry(deferralDelay(job.attemptsMade), 'deferred: account has the most deliveries in flight');
    }
    try {
      return await this.attempt(event);
    } finally {
      await this.accountSlots()
        .release(event.accountId, slot)
        .catch((error: unknown) => this.logger.warn(`could not release a delivery slot: ${(error as Error).message}`));
    }
  }

  /**
   * The two statements every delivery runs, as named prepared statements on the pool TypeORM
   * manages: parsed and planned once per connection instead of per delivery, and each run for a
   * whole batch of deliveries (PostgreSQL round trips were the largest cost per delivery in
   * bench:webhooks).
   */
  private async prepared(name: string, text: string, values: unknown[]): Promise<unknown[]> {
    const pool = (this.dataSource.driver as unknown as { master?: Pool }).master;
    if (!pool) return (await this.dataSource.query(text, values)) as unknown[];
    return (await pool.query({ name, text, values })).rows as unknown[];
  }

  private decrypt(ciphertext: string): string {
    let secret = this.secrets.get(ciphertext);
    if (secret === undefined) {
      if (this.secrets.size >= SECRET_CACHE_SIZE) this.secrets.clear();
      secret = decryptSecret(this.config.secretEncryptionKey, ciphertext);
      this.secrets.set(ciphertext, secret);
    }
    return secret;
  }

  private async attempt(event: DueEvent): Promise<DeliveryOutcome> {
    if (!event.webhookUrl) {
      await this.dataSource.query(
        `UPDATE webhook_events SET delivery_status = 'failed', last_error = $3, next_attempt_at = NULL
          WHERE id = $1 AND cycle = $2 AND delivery_status = 'pending'`,
        [event.id, event.cycle, NO_WEBHOOK_URL],
      );
      webhookDeliveries.inc({ outcome: 'no_webhook_url' });
      return 'no_webhook_url';
    }
    const secrets = event.secretCiphertexts.map((ciphertext) => this.decrypt(ciphertext));
    const at = new Date();
    const result = await this.http.post(event.webhookUrl, webhookHeaders(event.id, at, event.body, secrets), event.body);
    webhookDeliveries.inc({ outcome: outcomeLabel(result) });

    const cycleAttempts = event.cycleAttempts + 1;
    const delay =
      result.error === null
        ? null
        : nextRetryDelay({
            schedule: this.config.webhookRetryScheduleMs,
            cycleAttempts,
            responseStatus: result.responseStatus,
            retryAfterMs: parseRetryAfter(result.retryAfter, Date.now()),
          });
    const outcome: DeliveryOutcome = result.error === null ? 'delivered' : delay === null ? 'failed' : 'retry';
    // A delivered POST must not be sent again because its bookkeeping hit a passing database error.
    const recorded =
      outcome === 'delivered'
        ? await this.recordPersistently(event, at, result, outcome, delay)
        : await this.record(event, at, result, outcome, delay);
    if (!recorded) return 'skipped';
    if (outcome === 'delivered' && event.cycle === 1) {
      webhookDeliveryLatency.observe((Date.now() - event.createdAt.getTime()) / 1000);
    }
    if (outcome === 'retry' && delay !== null) throw new DeliveryRetry(delay, `attempt failed (${result.error}), retry in ${delay} ms`);
    return outcome;
  }

  /** Retries the write a few times; it is idempotent for a delivery (a second try finds it no longer pending). */
  private async recordPersistently(event: DueEvent, at: Date, result: DeliveryResult, outcome: DeliveryOutcome, delay: number | null): Promise<boolean> {
    for (const wait of RECORD_RETRY_WAITS_MS) {
      try {
        return await this.record(event, at, result, outcome, delay);
      } catch (error) {
        this.logger.warn(`could not record delivered event ${event.id}, retrying in ${wait} ms: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
    return this.record(event, at, result, outcome, delay);
  }

  /** Writes the attempt and the event's new state; false when the event moved on meanwhile. */
  private record(event: DueEvent, at: Date, result: DeliveryResult, outcome: DeliveryOutcome, delay: number | null): Promise<boolean> {
    return this.records.submit({
      eventId: event.id,
      cycle: event.cycle,
      at,
      responseStatus: result.responseStatus,
      error: result.error,
      status: outcome === 'retry' ? 'pending' : outcome === 'delivered' ? 'delivered' : 'failed',
      nextAttemptAt: delay === null ? null : new Date(Date.now() + delay),
      durationMs: result.durationMs,
      responseBody: result.responseBody,
    });
  }

  private async loadMany(ids: string[]): Promise<(DueEvent | undefined)[]> {
    const rows = (await this.prepared('webhook-delivery-load', LOAD_SQL, [[...new Set(ids)]])) as DueEvent[];
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id));
  }

  private async recordMany(attempts: AttemptRecord[]): Promise<boolean[]> {
    const column = <K extends keyof AttemptRecord>(key: K): AttemptRecord[K][] => attempts.map((attempt) => attempt[key]);
    const rows = (await this.prepared('webhook-delivery-record', RECORD_SQL, [
      column('eventId'),
      column('cycle'),
      column('at'),
      column('responseStatus'),
      column('error'),
      column('status'),
      column('nextAttemptAt'),
      column('durationMs'),
      column('responseBody'),
    ])) as { n: string }[];
    const recorded = new Set(rows.map((row) => Number(row.n)));
    return attempts.map((_, i) => recorded.has(i + 1));
  }

  close(): void {
    this.http.close();
  }
}
