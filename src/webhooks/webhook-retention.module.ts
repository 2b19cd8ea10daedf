import { Module } from '@nestjs/common';
import { WebhookEventRetention } from 'src/webhooks/webhook-event-retention.service';

/** The delivery log's retention, for the verifications feature's retention pass (no controller, any role). */
@Module({
  providers: [WebhookEventRetention],
  exports: [WebhookEventRetention],
})
export class WebhookRetentionModule {}
