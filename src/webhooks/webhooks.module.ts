import { Module } from '@nestjs/common';
import { AuditModule } from 'src/audit/audit.module';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/accounts/accounts.module';
import { DatabaseModule } from 'src/database/database.module';
import { cursorCodecProvider } from 'src/common/cursor.provider';
import { RateLimitModule } from 'src/auth/rate-limit/rate-limit.module';
import { DashboardDeliveries } from 'src/webhooks/dashboard/dashboard-deliveries.service';
import { WebhookEndpointController } from 'src/webhooks/endpoint/webhook-endpoint.controller';
import { WebhookEndpointService } from 'src/webhooks/endpoint/webhook-endpoint.service';
import { RedeliveryLimit } from 'src/webhooks/event-log/redelivery-limit';
import { TestEventLimit } from 'src/webhooks/event-log/test-event-limit';
import { WebhookAttempt } from 'src/webhooks/tables/webhook-attempt.entity';
import { WebhookEvent } from 'src/webhooks/tables/webhook-event.entity';
import { WebhookEventsController } from 'src/webhooks/event-log/webhook-events.controller';
import { WebhookEventsService } from 'src/webhooks/event-log/webhook-events.service';
import { WebhookEventNotifications } from 'src/webhooks/event-log/webhook-event-notifications';
import { WebhookEventStreams } from 'src/webhooks/event-log/webhook-event-streams.service';
import { WebhookOutboxService } from 'src/webhooks/outbox/webhook-outbox.service';
import { WebhooksCoreModule } from 'src/webhooks/webhooks-core.module';

/**
 * The webhooks feature as the API runs it, on the core (tables, enqueueing, the endpoint's lifecycle):
 * the client's delivery log (list, detail, replay, test events, the stream), the endpoint's routes, and
 * the operator's actions behind the queue dashboard's buttons.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEvent, WebhookAttempt]),
    AccountsModule,
    DatabaseModule,
    WebhooksCoreModule,
    RateLimitModule,
    AuditModule,
  ],
  controllers: [WebhookEventsController, WebhookEndpointController],
  providers: [
    cursorCodecProvider,
    WebhookOutboxService,
    WebhookEventsService,
    WebhookEndpointService,
    DashboardDeliveries,
    TestEventLimit,
    WebhookEventNotifications,
    WebhookEventStreams,
    RedeliveryLimit,
  ],
  exports: [
    WebhooksCoreModule,
    WebhookOutboxService,
    WebhookEventsService,
    WebhookEndpointService,
    DashboardDeliveries,
  ],
})
export class WebhooksModule {}
