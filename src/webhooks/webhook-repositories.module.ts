import { Module } from '@nestjs/common';
import { DatabaseModule } from 'src/database/database.module';
import { repositoryProviders } from 'src/database/repository-providers';
import { WebhookAttemptRepository } from 'src/webhooks/webhook-attempt.repository';
import { WebhookEventRepository } from 'src/webhooks/webhook-event.repository';

/** The webhooks feature's repositories (events, attempts), for every module that reads or writes its tables. */
@Module({
  imports: [DatabaseModule],
  providers: repositoryProviders(WebhookEventRepository, WebhookAttemptRepository),
  exports: [WebhookEventRepository, WebhookAttemptRepository],
})
export class WebhookRepositoriesModule {}
