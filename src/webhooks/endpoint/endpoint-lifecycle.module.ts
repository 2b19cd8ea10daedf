import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { EndpointLifecycle } from 'src/webhooks/endpoint/endpoint-lifecycle.service';
import { WebhookQueueModule } from 'src/webhooks/queue/webhook-queue.module';
import { WebhookRepositoriesModule } from 'src/webhooks/tables/webhook-repositories.module';

/** Disabling and enabling endpoints, with the release of held events: the API's routes and the worker. */
@Module({
  imports: [WebhookQueueModule, WebhookRepositoriesModule, AuditModule],
  providers: [EndpointLifecycle],
  exports: [EndpointLifecycle],
})
export class EndpointLifecycleModule {}
