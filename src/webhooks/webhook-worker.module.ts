import { BullModule, getQueueToken } from '@nestjs/bull';
import { Logger, Module } from '@nestjs/common';
import type { Queue } from 'bull';
import type { RedisClient } from 'src/redis/redis-connection';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { AccountConcurrency } from 'src/webhooks/delivery/account-concurrency';
import { DeliveryStore } from 'src/webhooks/delivery/delivery-store';
import { EndpointLifecycle } from 'src/webhooks/endpoint/endpoint-lifecycle.service';
import { WebhookDeliveryProcessor } from 'src/webhooks/delivery/webhook-delivery.processor';
import { WebhookHttpClient } from 'src/webhooks/delivery/webhook-http.client';
import { deliveryQueueOptions } from 'src/webhooks/queue/webhook-queue.factory';
import { DELIVERY_QUEUE } from 'src/webhooks/queue/webhook-queue.constants';
import { WebhooksCoreModule } from 'src/webhooks/webhooks-core.module';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import { WebhookSweeper } from 'src/webhooks/delivery/webhook-sweeper.service';
import { WebhookWorker } from 'src/webhooks/delivery/webhook-worker.service';

/** A slot outlives the time-out by this much, so a killed worker's slot frees itself soon after. */
const SLOT_MARGIN_MS = 15_000;

/** The webhooks feature as the worker runs it, on the core: the delivery processor and the outbox sweeper. */
@Module({
  imports: [
    DatabaseModule,
    WebhooksCoreModule,
    BullModule.registerQueueAsync({
      name: DELIVERY_QUEUE,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => deliveryQueueOptions(config),
    }),
  ],
  providers: [
    {
      provide: WebhookHttpClient,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        new WebhookHttpClient({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivateTargets }),
    },
    {
      provide: AccountConcurrency,
      inject: [getQueueToken(DELIVERY_QUEUE), APP_CONFIG],
      useFactory: (queue: Queue, config: AppConfig) =>
        new AccountConcurrency(
          queue.client as unknown as RedisClient,
          config.queuePrefix,
          config.webhookMaxInFlightPerAccount,
          config.webhookTimeoutMs + SLOT_MARGIN_MS,
        ),
    },
    DeliveryStore,
    {
      provide: WebhookDeliveryProcessor,
      inject: [APP_CONFIG, DeliveryStore, WebhookHttpClient, AccountConcurrency, DeliveryQueue, EndpointLifecycle],
      useFactory: (
        config: AppConfig,
        store: DeliveryStore,
        http: WebhookHttpClient,
        slots: AccountConcurrency,
        deliveryQueue: DeliveryQueue,
        endpoints: EndpointLifecycle,
      ) =>
        new WebhookDeliveryProcessor(
          config,
          store,
          http,
          slots,
          deliveryQueue,
          endpoints,
          new Logger(WebhookDeliveryProcessor.name),
        ),
    },
    WebhookSweeper,
    WebhookWorker,
  ],
})
export class WebhookWorkerModule {}
