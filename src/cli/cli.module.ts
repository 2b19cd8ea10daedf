import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { cursorCodecProvider } from 'src/common/cursor.provider';
import { APP_CONFIG, ConfigModule } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { WebhookEventsService } from 'src/webhooks/webhook-events.service';
import { WebhookOutboxService } from 'src/webhooks/webhook-outbox.service';
import { createProducerQueue } from 'src/webhooks/webhook-queue.factory';
import { DELIVERY_PRODUCER } from 'src/webhooks/webhook-queue.constants';

/**
 * The services the operations CLI drives, without WebhooksModule: that module's WebhookWorker
 * takes delivery jobs and sweeps on bootstrap, which a one-shot command must never do. Replays are
 * only enqueued (the producer queue), for the running workers to deliver.
 */
@Module({
  imports: [ConfigModule, DatabaseModule, AccountsModule],
  providers: [
    { provide: DELIVERY_PRODUCER, inject: [APP_CONFIG], useFactory: createProducerQueue },
    cursorCodecProvider,
    WebhookOutboxService,
    WebhookDispatcher,
    WebhookEventsService,
  ],
})
export class CliModule {}
