import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { webhookUrlOf } from 'src/accounts/account.repository';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { ApiError } from 'src/common/api-error';
import { type Actor, SYSTEM } from 'src/http/actor';
import { SqlParams } from 'src/common/sql-params';
import { CommitSettler } from 'src/database/commit-settler';
import { LegalHoldRepository, activeHoldSql } from 'src/verifications/legal-hold.repository';
import { verificationsRedacted } from 'src/verifications/redaction-metrics';
import { ERASED_FIELDS, redactVerification } from 'src/verifications/redacted-verification';
import { VerificationStatusHistoryRepository } from 'src/verifications/verification-status-history.repository';
import type { Verification } from 'src/verifications/verification.entity';
import { VerificationRepository, eraseVerificationsSql } from 'src/verifications/verification.repository';
import type { VerificationDetailResponseDto } from 'src/verifications/verification-response.dto';
import { toVerificationDetail, toVerificationResponse } from 'src/verifications/verification.mapper';
import { type DeliveryJobSource, deliveryJobSource } from 'src/webhooks/tables/event-rows';
import { redactEventBody, redactEventsCte } from 'src/webhooks/tables/event-redaction';
import { type RedactionReason, buildOutboxEvent } from 'src/webhooks/outbox/outbox-event';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import {
  WebhookEventRepository,
  eventCommitted,
  insertOutboxEvents,
} from 'src/webhooks/tables/webhook-event.repository';

type WithUrl = { webhookUrl: string | null };
type LockedVerification = Verification & WithUrl;

const WITH_WEBHOOK_URL = (accountId: string) => `${webhookUrlOf(accountId)} AS "webhookUrl"`;

/** PostgreSQL's deadlock_detected and serialization_failure: the transaction is safe to run again. */
const RETRYABLE_CODES = new Set(['40P01', '40001']);
const MAX_TRIES = 3;

/**
 * Erases verifications' personal data everywhere the service keeps it, in one transaction per call:
 * the row's personal fields (and with them the generated search column behind `q`), the frozen
 * payload of every webhook event of the verification, the response excerpts kept with their
 * attempts, and one new `verification.redacted` event per verification. The client's redact route,
 * the ops CLI and the retention pass (src/retention/) all come through here.
 */
@Injectable()
export class VerificationRedactor {
  private readonly logger = new Logger(VerificationRedactor.name);

  constructor(
    private readonly settler: CommitSettler,
    private readonly deliveryQueue: DeliveryQueue,
    private readonly verifications: VerificationRepository,
    private readonly history: VerificationStatusHistoryRepository,
    private readonly events: WebhookEventRepository,
    private readonly trail: AuditTrail,
    private readonly holds: LegalHoldRepository,
  ) {}

  /**
   * The client's erasure request. Idempotent: a redacted verification is answered as it is, with no
   * second event. `accountId` null is an operator's request, for any account.
   */
  async redact(
    accountId: string | null,
    id: string,
    reason: RedactionReason = 'client_request',
  ): Promise<VerificationDetailResponseDto> {
    const done = await this.inTransaction(async (manager) => {
      const row = await this.verifications.lockById<WithUrl>(manager, accountId, id, WITH_WEBHOOK_URL);
      if (!row) throw ApiError.notFound('verification');
      const hold = row.redactedAt === null ? await this.holds.findActive(manager, id) : null;
      if (hold) return { refused: { accountId: row.accountId, until: hold.until }, detail: null, jobs: [] };
      const { redacted, jobs } = await this.erase(manager, [row], reason);
      await this.recordErased(manager, redacted);
      const history = await this.history.ofVerification(manager, id);
      return { refused: null, detail: toVerificationDetail(redacted[0] ?? row, history), jobs };
    });
    if (done.refused || !done.detail) {
      // Nothing changed; the refusal is recorded on its own (outcome denied), then answered 409.
      const { accountId: owner, until } = done.refused ?? { accountId: null, until: null };
      const target = { type: 'verification', id };
      await this.trail.recordAlone({ action: 'verification.redacted', outcome: 'denied', target, accountId: owner });
      throw ApiError.legalHold(until);
    }
    this.deliveryQueue.dispatchNew(done.jobs);
    return done.detail;
  }

  /**
   * Redacts up to `limit` verifications whose age (`decided_at`, else `updated_at`) is past `days`,
   * oldest first, skipping rows another transaction holds: many workers share the work and never
   * redact one verification twice. Returns how many it redacted, and the accounts whose new events
   * wait their turn (`waitsItsTurn`): they take no queue job here, the caller lets each account's
   * through as its window has room (EndpointLifecycle.advance), so a pass never floods the queue.
   * The dead ones of accounts without a webhook URL are the exception: each is a failed job at once,
   * as every such event is (the Failed tab).
   */
  async redactExpired(days: number, limit: number): Promise<{ count: number; waiting: string[] }> {
    const { count, jobs } = await this.inTransaction(async (manager) => {
      const rows = await this.verifications.lockExpired<WithUrl>(manager, days, limit, WITH_WEBHOOK_URL, activeHoldSql);
      const { redacted, jobs } = await this.erase(manager, rows, 'retention');
      await this.recordErased(manager, redacted, SYSTEM);
      return { count: redacted.length, jobs };
    });
    this.deliveryQueue.dispatchNew(
      jobs.filter((job) => !job.webhookUrl),
      'maintenance',
    );
    const waiting = jobs.filter((job) => job.webhookUrl);
    this.deliveryQueue.announceWaiting(waiting);
    return { count, waiting: [...new Set(waiting.map((job) => job.accountId))] };
  }

  /**
   * The erasure of locked rows, in the caller's transaction; rows already redacted are left as they
   * are. Returns the redacted verifications and the jobs of their `verification.redacted` events,
   * to queue once the transaction commits.
   */
  private async erase(
    manager: EntityManager,
    rows: LockedVerification[],
    reason: RedactionReason,
  ): Promise<{ redacted: Verification[]; jobs: DeliveryJobSource[] }> {
    const due = rows.filter((row) => row.redactedAt === null);
    if (due.length === 0) return { redacted: [], jobs: [] };
    const now = new Date();
    const redacted = due.map(({ webhookUrl: _url, ...row }) => redactVerification(row, now));
    const redactedAt = new Map(redacted.map((v) => [v.id, v.redactedAt as Date]));

    const stored = await this.events.lockBodiesOf(
      manager,
      [...new Set(due.map((row) => row.accountId))],
      due.map((row) => row.id),
    );
    const events = stored.flatMap((event) => {
      const at = redactedAt.get(event.verificationId);
      return at ? [{ id: event.id, at, body: redactEventBody(event.body, ERASED_FIELDS, at.toISOString()) }] : [];
    });

    const changes = due.map((row, i) => ({
      accountId: row.accountId,
      verificationId: row.id,
      reason,
      verification: toVerificationResponse(redacted[i]),
    }));
    const built = changes.map((change, i) => buildOutboxEvent(change, due[i].webhookUrl, redacted[i].updatedAt));

    const params = new SqlParams();
    await manager.query(
      `WITH verification AS (
         ${eraseVerificationsSql(redacted, params)}),
       ${redactEventsCte(events, params)}
       ${insertOutboxEvents(built, params)}`,
      params.values,
    );
    verificationsRedacted.inc({ reason }, redacted.length);
    return { redacted, jobs: built.map((event, i) => deliveryJobSource({ ...event, webhookUrl: due[i].webhookUrl })) };
  }

  /** One `verification.redacted` entry per verification erased (none for one that already was). */
  private async recordErased(manager: EntityManager, redacted: Verification[], actor?: Actor): Promise<void> {
    const entries = redacted.map((verification) => ({
      action: 'verification.redacted',
      target: { type: 'verification', id: verification.id },
      accountId: verification.accountId,
      changes: Object.keys(ERASED_FIELDS),
      actor,
    }));
    await this.trail.recordMany(manager, entries);
  }

  /** A transaction run again (bounded) when PostgreSQL aborts it for a deadlock or a serialization failure. */
  private async inTransaction<T extends { jobs: DeliveryJobSource[] }>(
    work: (manager: EntityManager) => Promise<T>,
  ): Promise<T> {
    for (let tries = 1; ; tries += 1) {
      try {
        // Its new events show that it committed, if the commit's answer is lost; none, nothing was written.
        return await this.settler.transaction(work, ({ jobs }) => (jobs.length ? eventCommitted(jobs[0].id) : null));
      } catch (error) {
        const failure = error as { driverError?: { code?: string }; code?: string };
        const code = failure.driverError?.code ?? failure.code;
        if (tries >= MAX_TRIES || !code || !RETRYABLE_CODES.has(code)) throw error;
        this.logger.warn(`redaction transaction aborted (${code}), running it again`);
      }
    }
  }
}
