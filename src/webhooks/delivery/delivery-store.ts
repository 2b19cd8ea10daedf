import { Inject, Injectable, Logger } from '@nestjs/common';
import { activeSecretCiphertextsOf } from 'src/accounts/account-secret.repository';
import { webhookUrlOf } from 'src/accounts/account.repository';
import { SecretKeyring, cachedDecryptor } from 'src/accounts/secret-crypto';
import { MicroBatcher } from 'src/common/micro-batcher';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { PgPool } from 'src/database/pg-pool';
import type { DeliveryStatus, WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';
import { NO_WEBHOOK_URL } from 'src/webhooks/outbox/outbox-event';
import { insertAttemptsFromSql } from 'src/webhooks/tables/webhook-attempt.repository';
import {
  WebhookEndpointHealthRepository,
  recordHealthSql,
} from 'src/webhooks/tables/webhook-endpoint-health.repository';
import { endpointStateOf } from 'src/webhooks/tables/webhook-endpoint.repository';
import {
  WebhookEventRepository,
  dueEventsSql,
  recordAttemptsSql,
  waitingEventsOf,
} from 'src/webhooks/tables/webhook-event.repository';
import type { EntityManager } from 'typeorm';

/** What one delivery needs, read in one round trip: the event, its account's URL and active secrets. */
export type DueEvent = Pick<
  WebhookEvent,
  | 'id'
  | 'accountId'
  | 'body'
  | 'createdAt'
  | 'deliveryStatus'
  | 'cycle'
  | 'cycleAttempts'
  | 'nextAttemptAt'
  | 'lastError'
> & {
  webhookUrl: string | null;
  /** Ciphertexts of the secrets that currently sign, newest first (see `signingSecrets`). */
  secretCiphertexts: string[];
  /** When the account's endpoint was disabled; null while it is enabled. */
  disabledAt: Date | null;
  /** Whether the account has released events waiting their turn (see EndpointLifecycle.advance). */
  waiting: boolean;
};

/** One attempt, as it is written: the attempt row and the event's state after it. */
export interface AttemptRecord {
  eventId: string;
  cycle: number;
  at: Date;
  responseStatus: number | null;
  error: string | null;
  /** The event's delivery_status after this attempt. */
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
  durationMs: number;
  responseBody: string | null;
  /** The url the attempt was sent to: its outcome belongs to that url. */
  url: string;
}

/** Whether an attempt was written: false if its event moved on, 'held' if its endpoint was disabled meanwhile. */
export type RecordResult = boolean | 'held';
type Row = { n: string; held: boolean };

/** Whether an attempt was written, and whether the account had left its url by then. */
export interface Recorded {
  recorded: boolean;
  /** The account's url is no longer the attempt's: the outcome touched neither endpoint state nor health. */
  moved: boolean;
}

// Every delivery reaching this step in one turn of the event loop is read in one go, with URL and active secrets.
const LOAD_SQL = dueEventsSql(
  (accountId) =>
    `${webhookUrlOf(accountId)} AS "webhookUrl", ${activeSecretCiphertextsOf(accountId)} AS "secretCiphertexts",
     ${endpointStateOf(accountId)}, ${waitingEventsOf(accountId)} AS waiting`,
);

// One statement for a batch of attempts, atomic without a transaction: each event's new state and its attempt
// row, or nothing for an event that moved on (no row updated, none inserted). An attempt to a url the account has
// since left counts in no endpoint's health (compared in this statement, so a url change commits before or after
// it). Returns the (1-based) positions of the attempts recorded, whether each url was left, and if its event is held.
const RECORD_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::uuid[], $2::integer[], $3::timestamptz[], $4::integer[], $5::varchar[], $6::varchar[],
                         $7::timestamptz[], $8::integer[], $9::varchar[], $10::varchar[])
      WITH ORDINALITY AS t(id, cycle, at, response_status, error, status, next_attempt_at, duration_ms, response_body, url, n)),
  updated AS (
    ${recordAttemptsSql('input', (accountId) => `(i.url IS DISTINCT FROM ${webhookUrlOf(accountId)})`)}),
  inserted AS (
    ${insertAttemptsFromSql('updated')}),
  health AS (
    ${recordHealthSql('(SELECT * FROM updated WHERE NOT moved)')})
  SELECT n, moved, held FROM updated`;

/** The composed statements, for their snapshots in sql/ (test/sql-snapshots.e2e-spec.ts). */
export const DELIVERY_SQL = { load: LOAD_SQL, record: RECORD_SQL };

/** RECORD_SQL's parameters: one array per column. */
function recordValues(attempts: AttemptRecord[]): unknown[] {
  const column = <K extends keyof AttemptRecord>(key: K): AttemptRecord[K][] => attempts.map((attempt) => attempt[key]);
  return [
    column('eventId'),
    column('cycle'),
    column('at'),
    column('responseStatus'),
    column('error'),
    column('status'),
    column('nextAttemptAt'),
    column('durationMs'),
    column('responseBody'),
    column('url'),
  ];
}

/** Waits between tries to record a delivery that succeeded, before giving up and letting the job retry. */
const RECORD_RETRY_WAITS_MS = [200, 1_000, 3_000];

/** The delivery worker's reads and writes of its events and attempts, composed from the owning repositories' fragments.
 * The two statements every delivery runs are prepared on the raw pool, each run for a whole batch of deliveries:
 * PostgreSQL round trips were the largest cost per delivery in bench:webhooks. */
@Injectable()
export class DeliveryStore {
  private readonly logger = new Logger(DeliveryStore.name);
  private readonly decrypt: (ciphertext: string) => string;
  private readonly loads = new MicroBatcher<string, DueEvent | undefined>((ids) => this.loadMany(ids));
  // A delivery whose record fails may be POSTed again, so one bad attempt must not fail the batch.
  // Two attempts of one event never share a statement: with both in one UPDATE … FROM, PostgreSQL
  // would apply either, and a retry could overwrite a delivery. The later one goes in the next batch.
  private readonly records = new MicroBatcher<AttemptRecord, RecordResult>((attempts) => this.recordMany(attempts), {
    isolateFailures: true,
    keyOf: (attempt) => attempt.eventId,
  });

  constructor(
    private readonly pool: PgPool,
    private readonly events: WebhookEventRepository,
    private readonly health: WebhookEndpointHealthRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.decrypt = cachedDecryptor(new SecretKeyring(config.secretEncryptionKeys));
  }

  /** The event with what its delivery needs; undefined when it no longer exists. */
  load(eventId: string): Promise<DueEvent | undefined> {
    return this.loads.submit(eventId);
  }

  /** Writes the attempt and the event's new state; false when the event moved on meanwhile, 'held' when it is held. */
  record(attempt: AttemptRecord): Promise<RecordResult> {
    return this.records.submit(attempt);
  }

  /**
   * For an attempt whose POST succeeded: retries the write a few times, because a delivery whose
   * bookkeeping hit a passing database error would otherwise be POSTed again. Idempotent: a second
   * try finds the event no longer pending.
   */
  async recordUntilStored(attempt: AttemptRecord): Promise<RecordResult> {
    for (const wait of RECORD_RETRY_WAITS_MS) {
      try {
        return await this.record(attempt);
      } catch (error) {
        this.logger.warn(
          `could not record delivered event ${attempt.eventId}, retrying in ${wait} ms: ${(error as Error).message}`,
        );
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
    return this.record(attempt);
  }

  /**
   * Writes the attempt and the event's new state in the caller's transaction (a 410's, which holds
   * the event unless the account has left that url meanwhile: then it is due again, at the new url).
   */
  async recordIn(manager: EntityManager, attempt: AttemptRecord): Promise<Recorded> {
    const rows = (await manager.query(RECORD_SQL, recordValues([attempt]))) as { moved: boolean }[];
    return { recorded: rows.length > 0, moved: rows[0]?.moved === true };
  }

  /** The endpoint's `failing_since` as the attempts recorded so far left it. */
  async failingSince(accountId: string): Promise<Date | null> {
    return (await this.health.of(accountId)).failingSince;
  }

  /** The event's cycle becomes held, if its endpoint is (still) disabled; false when it is not. */
  hold(event: Pick<DueEvent, 'id' | 'cycle' | 'accountId'>): Promise<boolean> {
    return this.events.holdIfDisabled(event);
  }

  /** The event waits its turn (its account has the most deliveries in flight); false when it moved on meanwhile. */
  park(event: Pick<DueEvent, 'id' | 'cycle'>): Promise<boolean> {
    return this.events.park(event);
  }

  /** The event's signing secrets in clear, decrypted only for an event that is really attempted. */
  signingSecrets(event: Pick<DueEvent, 'secretCiphertexts'>): string[] {
    return event.secretCiphertexts.map(this.decrypt);
  }

  /** An account without a webhook URL: the event fails with no attempt. */
  async failWithoutUrl(event: Pick<DueEvent, 'id' | 'cycle'>): Promise<void> {
    await this.events.failCycle(event, NO_WEBHOOK_URL);
  }

  private async loadMany(ids: string[]): Promise<(DueEvent | undefined)[]> {
    const rows = await this.pool.prepared<DueEvent>('webhook-delivery-load', LOAD_SQL, [[...new Set(ids)]]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id));
  }

  private async recordMany(attempts: AttemptRecord[]): Promise<RecordResult[]> {
    const rows = await this.pool.prepared<Row>('webhook-delivery-record', RECORD_SQL, recordValues(attempts));
    const recorded = new Map(rows.map((row): [number, RecordResult] => [Number(row.n), row.held ? 'held' : true]));
    return attempts.map((_, i) => recorded.get(i + 1) ?? false);
  }
}
