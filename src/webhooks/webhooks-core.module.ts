import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { APP_CONFIG } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';
import { EndpointLifecycle } from 'src/webhooks/endpoint/endpoint-lifecycle.service';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { EventAnnouncer } from 'src/webhooks/queue/event-announcer';
import { createProducerQueue } from 'src/webhooks/queue/webhook-queue.factory';
import { DELIVERY_PRODUCER } from 'src/webhooks/queue/webhook-queue.constants';
import { WebhookAttemptRepository } from 'src/webhooks/tables/webhook-attempt.repository';
import { WebhookEndpointHealthRepository } from 'src/webhooks/tables/webhook-endpoint-health.repository';
import { WebhookEndpointRepository } from 'src/webhooks/tables/webhook-endpoint.repository';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';

const REPOSITORIES = [
  WebhookEventRepository,
  WebhookAttemptRepository,
  WebhookEndpointRepository,
  WebhookEndpointHealthRepository,
];

/**
 * The webhooks feature's core, shared by every role and the CLI: the repositories of its four tables,
 * enqueueing deliveries (the producer queue and DeliveryQueue), and the endpoint's lifecycle (disable,
 * enable, release of held events). WebhooksModule (the API) and WebhookWorkerModule (the worker) build
 * on it; the redactor and the retention passes import it alone.
 */
@Module({
  imports: [DatabaseModule, AuditModule],
  providers: [
    ...repositoryProviders(...REPOSITORIES),
    { provide: DELIVERY_PRODUCER, inject: [APP_CONFIG], useFactory: createProducerQueue },
    EventAnnouncer,
    DeliveryQueue,
    EndpointLifecycle,
  ],
  exports: [...REPOSITORIES, DELIVERY_PRODUCER, DeliveryQueue, EndpointLifecycle],
})
export class WebhooksCoreModule {}
