import { Module } from '@nestjs/common';
import { APP_CONFIG } from 'src/config/config.module';
import { EventAnnouncer } from 'src/webhooks/queue/event-announcer';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { createProducerQueue } from 'src/webhooks/queue/webhook-queue.factory';
import { DELIVERY_PRODUCER } from 'src/webhooks/queue/webhook-queue.constants';

/** Enqueueing deliveries (the producer queue and DeliveryQueue): the API, the worker's sweeper and the CLI. */
@Module({
  providers: [
    { provide: DELIVERY_PRODUCER, inject: [APP_CONFIG], useFactory: createProducerQueue },
    EventAnnouncer,
    DeliveryQueue,
  ],
  exports: [DELIVERY_PRODUCER, DeliveryQueue],
})
export class WebhookQueueModule {}
