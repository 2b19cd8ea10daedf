import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { WebhookOutboxService } from 'src/webhooks/webhook-outbox.service';

@Module({
  imports: [AccountsModule],
  providers: [WebhookOutboxService, WebhookDispatcher],
  exports: [WebhookOutboxService, WebhookDispatcher],
})
export class WebhooksModule {}
