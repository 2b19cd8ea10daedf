import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { AccountsModule } from 'src/accounts/accounts.module';
import { cursorCodecProvider } from 'src/common/cursor.provider';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { WebhookDeliveryProcessor } from 'src/webhooks/webhook-delivery.processor';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { WebhookEventsController } from 'src/webhooks/webhook-events.controller';
import { WebhookEventsService } from 'src/webhooks/webhook-events.service';
import { WebhookOutboxService } from 'src/webhooks/webhook-outbox.service';
import { createProducerQueue, deliveryQueueOptions } from 'src/webhooks/webhook-queue.factory';
import { DELIVERY_PRODUCER, DELIVERY_QUEUE } from 'src/webhooks/webhook-queue.constants';
import { WebhookSweeper } from 'src/webhooks/webhook-sweeper.service';
import { WebhookWorker } from 'src/webhooks/webhook-worker.service';

@Module({
  imports: [
    AccountsModule,
    BullModule.registerQueueAsync({
      name: DELIVERY_QUEUE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => deliveryQueueOptions(config),
    }),
  ],
  controllers: [WebhookEventsController],
  providers: [
    { provide: DELIVERY_PRODUCER, inject: [APP_CONFIG], useFactory: createProducerQueue },
    cursorCodecProvider,
    WebhookOutboxService,
    WebhookDispatcher,
    WebhookDeliveryProcessor,
    WebhookSweeper,
    WebhookWorker,
    WebhookEventsService,
  ],
  exports: [WebhookOutboxService, WebhookDispatcher],
})
export class WebhooksModule {}
