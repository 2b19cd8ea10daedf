import { BullModule, getQueueToken } from '@nestjs/bull';
import { Logger, Module } from '@nestjs/common';
import type { Queue } from 'bull';
import type { RedisClient } from 'src/redis/redis-connection';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { DatabaseModule } from 'src/database/database.module';
import { AccountSlots } from 'src/webhooks/account-slots';
import { DeliveryStore } from 'src/webhooks/delivery-store';
import { EndpointStatesModule } from 'src/webhooks/endpoint-states.module';
import { EndpointStates } from 'src/webhooks/endpoint-states.service';
import { WebhookDeliveryProcessor } from 'src/webhooks/webhook-delivery.processor';
import { WebhookHttpClient } from 'src/webhooks/webhook-http.client';
import { deliveryQueueOptions } from 'src/webhooks/webhook-queue.factory';
import { DELIVERY_QUEUE } from 'src/webhooks/webhook-queue.constants';
import { WebhookQueueModule } from 'src/webhooks/webhook-queue.module';
import { WebhookRepositoriesModule } from 'src/webhooks/webhook-repositories.module';
import { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import { WebhookSweeper } from 'src/webhooks/webhook-sweeper.service';
import { WebhookWorker } from 'src/webhooks/webhook-worker.service';

/** A slot outlives the time-out by this much, so a killed worker's slot frees itself soon after. */
const SLOT_MARGIN_MS = 15_000;

/** The webhooks feature as the worker runs it: the delivery processor and the outbox sweeper. */
@Module({
  imports: [
    DatabaseModule,
    WebhookQueueModule,
    WebhookRepositoriesModule,
    EndpointStatesModule,
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
      provide: AccountSlots,
      inject: [getQueueToken(DELIVERY_QUEUE), APP_CONFIG],
      useFactory: (queue: Queue, config: AppConfig) =>
        new AccountSlots(
          queue.client as unknown as RedisClient,
          config.queuePrefix,
          config.webhookMaxInFlightPerAccount,
          config.webhookTimeoutMs + SLOT_MARGIN_MS,
        ),
    },
    DeliveryStore,
    {
      provide: WebhookDeliveryProcessor,
      inject: [APP_CONFIG, DeliveryStore, WebhookHttpClient, AccountSlots, WebhookDispatcher, EndpointStates],
      useFactory: (
        config: AppConfig,
        store: DeliveryStore,
        http: WebhookHttpClient,
        slots: AccountSlots,
        dispatcher: WebhookDispatcher,
        endpoints: EndpointStates,
      ) =>
        new WebhookDeliveryProcessor(
          config,
          store,
          http,
          slots,
          dispatcher,
          endpoints,
          new Logger(WebhookDeliveryProcessor.name),
        ),
    },
    WebhookSweeper,
    WebhookWorker,
  ],
})
export class WebhookWorkerModule {}
