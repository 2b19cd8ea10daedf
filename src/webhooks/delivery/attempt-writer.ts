import type { LoggerService } from '@nestjs/common';
import type { AppConfig } from 'src/config/app-config';
import type { AttemptOutcome } from 'src/webhooks/delivery/delivery-policy';
import type { DeliveryStorePort, EndpointPort } from 'src/webhooks/delivery/delivery-ports';
import type { AttemptRecord, RecordResult } from 'src/webhooks/delivery/delivery-store';
import { endpointDisableReason } from 'src/webhooks/delivery/delivery-policy';

/**
 * Writes an attempt, and what it does to the account's endpoint: an HTTP 410 disables it in the
 * attempt's own transaction; an event that used up its schedule disables it once it has been failing
 * longer than WEBHOOK_DISABLE_AFTER. The processor's half that touches endpoints, so the processor
 * reads as the path of one job.
 */
export class AttemptWriter {
  constructor(
    private readonly config: Pick<AppConfig, 'webhookDisableAfterMs'>,
    private readonly store: DeliveryStorePort,
    private readonly endpoints: EndpointPort,
    private readonly logger: Pick<LoggerService, 'warn'>,
  ) {}

  /**
   * Records the attempt; on HTTP 410, in the transaction that disables the endpoint (the event is
   * held) — unless the account left that url meanwhile ('moved': the event is due again, at the new url).
   * 'held' when the endpoint was disabled while the attempt was in flight (the event stays held).
   */
  async write(record: AttemptRecord, outcome: AttemptOutcome, accountId: string): Promise<RecordResult | 'moved'> {
    if (outcome.kind === 'delivered') return this.store.recordUntilStored(record);
    if (outcome.kind !== 'held') return this.store.record(record);
    let written: boolean | 'moved' = false;
    await this.endpoints.disable(accountId, 'gone', async (manager) => {
      const { recorded, moved } = await this.store.recordIn(manager, record);
      written = recorded && moved ? 'moved' : recorded;
      return !moved;
    });
    return written;
  }

  /** After an event used up its schedule: the endpoint is disabled if it has been failing longer than WEBHOOK_DISABLE_AFTER. */
  async disableIfFailingTooLong(accountId: string): Promise<void> {
    if (this.config.webhookDisableAfterMs <= 0) return;
    try {
      const reason = endpointDisableReason({
        outcome: 'failed',
        failingSince: await this.store.failingSince(accountId),
        now: new Date(),
        disableAfterMs: this.config.webhookDisableAfterMs,
      });
      if (reason) await this.endpoints.disable(accountId, reason);
    } catch (error) {
      // The next event to use up its schedule decides again.
      this.logger.warn(`could not check the endpoint of account ${accountId}: ${(error as Error).message}`);
    }
  }
}
