import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { VerificationRedactor } from 'src/verifications/verification-redactor.service';
import { VerificationRepository } from 'src/verifications/verification.repository';
import { WebhookEventRepository } from 'src/webhooks/webhook-event.repository';
import { webhookEventsDeleted } from 'src/webhooks/webhook-metrics';

/** Verifications redacted per transaction: each batch holds its row locks for a fraction of a second. */
export const REDACT_BATCH = 200;
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
 * taken with SKIP LOCKED, so any number of workers can run passes at once. The owners do the work:
 * the redactor erases (and announces) each batch, the event repository deletes.
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger(RetentionService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly redactor: VerificationRedactor,
    private readonly verifications: VerificationRepository,
    private readonly events: WebhookEventRepository,
  ) {}

  get enabled(): boolean {
    return this.config.piiRetentionDays > 0 || this.config.webhookEventRetentionDays > 0;
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
    const pii = this.config.piiRetentionDays;
    if (pii > 0) {
      for (let n = REDACT_BATCH; n === REDACT_BATCH && keepGoing();) {
        n = await this.redactor.redactExpired(pii, REDACT_BATCH);
        counts.verifications += n;
      }
    }
    const days = this.config.webhookEventRetentionDays;
    if (days > 0) {
      for (let n = DELETE_BATCH; n === DELETE_BATCH && keepGoing();) {
        n = await this.events.deleteFinishedOlderThan(days, DELETE_BATCH);
        webhookEventsDeleted.inc(n);
        counts.webhookEvents += n;
      }
    }
    if (counts.verifications > 0 || counts.webhookEvents > 0) {
      this.logger.log(
        `retention: redacted ${counts.verifications} verification(s) past PII_RETENTION_DAYS=${pii}, ` +
          `deleted ${counts.webhookEvents} webhook event(s) past WEBHOOK_EVENT_RETENTION_DAYS=${days} ` +
          `in ${Date.now() - started} ms`,
      );
    }
    return counts;
  }

  /** What a pass would do now, counts only: nothing is changed. */
  async preview(): Promise<RetentionCounts> {
    const pii = this.config.piiRetentionDays;
    const days = this.config.webhookEventRetentionDays;
    return {
      verifications: pii > 0 ? await this.verifications.countExpired(pii) : 0,
      webhookEvents: days > 0 ? await this.events.countFinishedOlderThan(days) : 0,
    };
  }
}
