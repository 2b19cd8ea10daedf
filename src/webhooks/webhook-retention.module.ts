import { Module } from '@nestjs/common';
import { WebhookEventRetention } from 'src/webhooks/webhook-event-retention.service';
import { WebhookRepositoriesModule } from 'src/webhooks/webhook-repositories.module';

/** The delivery log's retention, for the verifications feature's retention pass (no controller, any role). */
@Module({
  imports: [WebhookRepositoriesModule],
  providers: [WebhookEventRetention],
  exports: [WebhookEventRetention],
})
export class WebhookRetentionModule {}
