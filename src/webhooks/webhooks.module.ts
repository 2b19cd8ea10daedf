import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/accounts/accounts.module';
import { cursorCodecProvider } from 'src/common/cursor.provider';
import { RateLimitModule } from 'src/auth/rate-limit/rate-limit.module';
import { DeliveryOperator } from 'src/webhooks/delivery-operator.service';
import { EndpointStatesModule } from 'src/webhooks/endpoint-states.module';
import { WebhookEndpointController } from 'src/webhooks/webhook-endpoint.controller';
import { WebhookEndpointService } from 'src/webhooks/webhook-endpoint.service';
import { TestEventLimit } from 'src/webhooks/test-event-limit';
import { WebhookAttempt } from 'src/webhooks/webhook-attempt.entity';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';
import { WebhookEventsController } from 'src/webhooks/webhook-events.controller';
import { WebhookEventsService } from 'src/webhooks/webhook-events.service';
import { WebhookOutboxService } from 'src/webhooks/webhook-outbox.service';
import { WebhookQueueModule } from 'src/webhooks/webhook-queue.module';
import { WebhookRepositoriesModule } from 'src/webhooks/webhook-repositories.module';

/**
 * The webhooks feature as the API runs it: the outbox a status change writes into, the dispatcher
 * that queues its events, the client's delivery log (list, detail, replay, test events), and the
 * operator's actions behind the queue dashboard's buttons.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEvent, WebhookAttempt]),
    AccountsModule,
    WebhookQueueModule,
    WebhookRepositoriesModule,
    EndpointStatesModule,
    RateLimitModule,
  ],
  controllers: [WebhookEventsController, WebhookEndpointController],
  providers: [
    cursorCodecProvider,
    WebhookOutboxService,
    WebhookEventsService,
    WebhookEndpointService,
    DeliveryOperator,
    TestEventLimit,
  ],
  exports: [WebhookQueueModule, WebhookOutboxService, WebhookEventsService, WebhookEndpointService, DeliveryOperator],
})
export class WebhooksModule {}
