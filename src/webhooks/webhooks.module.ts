import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/accounts/accounts.module';
import { DatabaseModule } from 'src/database/database.module';
import { cursorCodecProvider } from 'src/common/cursor.provider';
import { RateLimitModule } from 'src/auth/rate-limit/rate-limit.module';
import { DeliveryOperator } from 'src/webhooks/delivery-operator.service';
import { EndpointStatesModule } from 'src/webhooks/endpoint-states.module';
import { WebhookEndpointController } from 'src/webhooks/webhook-endpoint.controller';
import { WebhookEndpointService } from 'src/webhooks/webhook-endpoint.service';
import { RedeliveryLimit } from 'src/webhooks/redelivery-limit';
import { TestEventLimit } from 'src/webhooks/test-event-limit';
import { WebhookAttempt } from 'src/webhooks/webhook-attempt.entity';
import { WebhookEvent } from 'src/webhooks/webhook-event.entity';
import { WebhookEventsController } from 'src/webhooks/webhook-events.controller';
import { WebhookEventsService } from 'src/webhooks/webhook-events.service';
import { WebhookEventNotifications } from 'src/webhooks/webhook-event-notifications';
import { WebhookEventStreams } from 'src/webhooks/webhook-event-streams.service';
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
    DatabaseModule,
    WebhookQueueModule,
    WebhookRepositoriesModule,
    EndpointStatesModule,
    RateLimitModule,
    AuditModule,
  ],
  controllers: [WebhookEventsController, WebhookEndpointController],
  providers: [
    cursorCodecProvider,
    WebhookOutboxService,
    WebhookEventsService,
    WebhookEndpointService,
    DeliveryOperator,
    TestEventLimit,
    WebhookEventNotifications,
    WebhookEventStreams,
    RedeliveryLimit,
  ],
  exports: [WebhookQueueModule, WebhookOutboxService, WebhookEventsService, WebhookEndpointService, DeliveryOperator],
})
export class WebhooksModule {}
