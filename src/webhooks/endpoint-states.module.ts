import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { EndpointStates } from 'src/webhooks/endpoint-states.service';
import { WebhookQueueModule } from 'src/webhooks/webhook-queue.module';
import { WebhookRepositoriesModule } from 'src/webhooks/webhook-repositories.module';

/** Disabling and enabling endpoints, with the release of held events: the API's routes and the worker. */
@Module({
  imports: [WebhookQueueModule, WebhookRepositoriesModule, AuditModule],
  providers: [EndpointStates],
  exports: [EndpointStates],
})
export class EndpointStatesModule {}
