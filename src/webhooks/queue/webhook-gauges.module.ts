import { Module } from '@nestjs/common';
import { WebhookGauges } from 'src/webhooks/queue/webhook-gauges.service';
import { WebhookQueueModule } from 'src/webhooks/queue/webhook-queue.module';
import { WebhookRepositoriesModule } from 'src/webhooks/tables/webhook-repositories.module';

/** The delivery backlog and queue-depth gauges, for the /metrics of every service role (not the CLI). */
@Module({ imports: [WebhookQueueModule, WebhookRepositoriesModule], providers: [WebhookGauges] })
export class WebhookGaugesModule {}
