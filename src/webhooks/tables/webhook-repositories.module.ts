import { Module } from '@nestjs/common';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';
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

/** The webhooks feature's repositories (events, attempts, endpoints, their health), for every module that reads or writes its tables. */
@Module({
  imports: [DatabaseModule],
  providers: repositoryProviders(...REPOSITORIES),
  exports: REPOSITORIES,
})
export class WebhookRepositoriesModule {}
