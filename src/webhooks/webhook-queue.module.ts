import { Module } from '@nestjs/common';
import { APP_CONFIG } from 'src/config/config.module';
import { EventAnnouncer } from 'src/webhooks/event-announcer';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { createProducerQueue } from 'src/webhooks/webhook-queue.factory';
import { DELIVERY_PRODUCER } from 'src/webhooks/webhook-queue.constants';

/** Enqueueing deliveries (the producer queue and the dispatcher): the API, the worker's sweeper and the CLI. */
@Module({
  providers: [
    { provide: DELIVERY_PRODUCER, inject: [APP_CONFIG], useFactory: createProducerQueue },
    EventAnnouncer,
    WebhookDispatcher,
  ],
  exports: [DELIVERY_PRODUCER, WebhookDispatcher],
})
export class WebhookQueueModule {}
