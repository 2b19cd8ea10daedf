import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditEventRepository } from 'src/audit/audit-event.repository';
import { auditEntriesExpired } from 'src/audit/audit-metrics';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { standbyLagMs } from 'src/database/standby-lag';
import { MaintenanceBudget } from 'src/retention/maintenance-budget';
import { activeHoldSql } from 'src/verifications/legal-hold.repository';
import { retentionSkipped } from 'src/verifications/redaction-metrics';
import { VerificationRedactor } from 'src/verifications/verification-redactor.service';
import { VerificationRepository } from 'src/verifications/verification.repository';
import { EndpointLifecycle } from 'src/webhooks/endpoint/endpoint-lifecycle.service';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';
import { webhookEventsDeleted } from 'src/webhooks/queue/webhook-metrics';

/**
 * Verifications redacted per transaction. Small, so each burst of work is short: with the budget's
 * share of time the same, a client's request that runs beside a batch waits less behind it (on a
 * year of data, another client's list p99 while a pass ran: 3.1-3.4 x of without at 200, 2.4 x at
 * 50, at the same rows/s; docs/performance.md).
 */
export const REDACT_BATCH = 50;
/** Webhook events deleted per statement (their attempts go with them). */
export const DELETE_BATCH = 1_000;

export interface RetentionCounts {
  /** Verifications redacted (or, in a dry run, that would be). */
  verifications: number;
  /** Delivered and failed webhook events deleted (or, in a dry run, that would be). */
  webhookEvents: number;
}

/**
 * The retention policy: verifications past PII_RETENTION_DAYS are redacted (reason `retention`),
 * delivered and failed webhook events past WEBHOOK_EVENT_RETENTION_DAYS are deleted with their
 * attempts; a pending event never is. Work goes in small batches, each its own transaction over rows
 * taken with SKIP LOCKED, so any number of workers can run passes at once, each within its
 * RETENTION_BUDGET_PERCENT of the time and never ahead of a standby (maintenance-budget.ts). The
 * owners do the work: the redactor erases (and announces) each batch, the event repository deletes.
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger(RetentionService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly redactor: VerificationRedactor,
    private readonly verifications: VerificationRepository,
    private readonly events: WebhookEventRepository,
    private readonly auditEvents: AuditEventRepository,
    private readonly dataSource: DataSource,
    private readonly endpoints: EndpointLifecycle,
  ) {}

  get enabled(): boolean {
    const { piiRetentionDays, webhookEventRetentionDays, auditRetentionDays } = this.config;
    return piiRetentionDays > 0 || webhookEventRetentionDays > 0 || auditRetentionDays > 0;
  }

  /** What the policy means, for the logs and the CLI. */
  describe(): string {
    const pii = this.config.piiRetentionDays;
    const events = this.config.webhookEventRetentionDays;
    return [
      pii > 0 ? `verifications redacted after ${pii} days (PII_RETENTION_DAYS)` : 'PII_RETENTION_DAYS=0: no redaction',
      events > 0
        ? `delivered and failed webhook events deleted after ${events} days (WEBHOOK_EVENT_RETENTION_DAYS)`
        : 'WEBHOOK_EVENT_RETENTION_DAYS=0: events kept forever',
    ].join('; ');
  }

  /**
   * One pass to the end: batches until nothing past either window is left, or until `keepGoing`
   * says stop (a shutdown), between two batches.
   */
  async run(keepGoing: () => boolean = () => true): Promise<RetentionCounts> {
    const started = Date.now();
    const counts: RetentionCounts = { verifications: 0, webhookEvents: 0 };
    const budget = new MaintenanceBudget(
      this.config.retentionBudgetPercent,
      () => standbyLagMs(this.dataSource),
      keepGoing,
      (ms) =>
        this.logger.warn(`retention: a standby is still over 1 s behind after ${ms} ms; the next batch goes ahead`),
    );
    /** Runs `batch` until it returns less than `size` (nothing left) or the pass is told to stop; the rows it counted. */
    const drain = async (size: number, batch: () => Promise<number>): Promise<number> => {
      let total = 0;
      for (let n: number | undefined = size; n === size; total += n ?? 0) n = await budget.batch(batch);
      return total;
    };
    const pii = this.config.piiRetentionDays;
    if (pii > 0) {
      // Held verifications are passed over (counted once a pass); once the hold ends, the next pass redacts them.
      retentionSkipped.inc({ reason: 'legal_hold' }, await this.verifications.countExpired(pii, activeHoldSql));
      counts.verifications = await drain(REDACT_BATCH, async () => {
        const { count, waiting } = await this.redactor.redactExpired(pii, REDACT_BATCH);
        // The batch's webhooks are let through with it, paced by the budget that paces it, rather than all
        // of a sweep interval's at the next sweep (docs/performance.md). An account whose promotion is under
        // way is not waited for but tried again shortly (advanceIfFree); if this fails, the sweep does it.
        await this.endpoints
          .advanceIfFree(waiting)
          .catch((error: unknown) =>
            this.logger.warn(`retention: a batch's webhooks wait for the sweep: ${(error as Error).message}`),
          );
        return count;
      });
    }
    const days = this.config.webhookEventRetentionDays;
    if (days > 0) {
      counts.webhookEvents = await drain(DELETE_BATCH, async () => {
        const n = await this.events.deleteFinishedOlderThan(days, DELETE_BATCH);
        webhookEventsDeleted.inc(n);
        return n;
      });
    }
    // AUDIT_RETENTION_DAYS: the trail's oldest entries go, oldest first (its anchor stays in the entry kept).
    const auditDays = this.config.auditRetentionDays;
    const expired =
      auditDays > 0 ? await drain(DELETE_BATCH, () => this.auditEvents.expire(auditDays, DELETE_BATCH)) : 0;
    auditEntriesExpired.inc(expired);
    if (expired > 0)
      this.logger.log(`retention: removed ${expired} audit entries past AUDIT_RETENTION_DAYS=${auditDays}`);
    if (counts.verifications > 0 || counts.webhookEvents > 0) {
      this.logger.log(
        `retention: redacted ${counts.verifications} verification(s) past PII_RETENTION_DAYS=${pii}, ` +
          `deleted ${counts.webhookEvents} webhook event(s) past WEBHOOK_EVENT_RETENTION_DAYS=${days} ` +
          `in ${Date.now() - started} ms`,
      );
    }
    if (budget.standbyWaitMs > 0) {
      this.logger.log(`retention: waited ${Math.round(budget.standbyWaitMs)} ms for standbys to catch up`);
    }
    return counts;
  }

  /** What a pass would do now, counts only: nothing is changed. */
  async preview(): Promise<RetentionCounts> {
    const pii = this.config.piiRetentionDays;
    const days = this.config.webhookEventRetentionDays;
    return {
      verifications: pii > 0 ? await this.verifications.countExpired(pii, (id) => `NOT ${activeHoldSql(id)}`) : 0,
      webhookEvents: days > 0 ? await this.events.countFinishedOlderThan(days) : 0,
    };
  }
}
