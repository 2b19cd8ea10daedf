import type { Job } from 'bull';
import type { AccountConcurrency } from 'src/webhooks/delivery/account-concurrency';
import type { DeliveryJobData } from 'src/webhooks/queue/delivery-job';
import type { DeliveryStore } from 'src/webhooks/delivery/delivery-store';
import type { EndpointLifecycle } from 'src/webhooks/endpoint/endpoint-lifecycle.service';
import type { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import type { WebhookHttpClient } from 'src/webhooks/delivery/webhook-http.client';

/** The seams the processor works through; the spec gives it fakes of them. */
export type DeliveryStorePort = Pick<
  DeliveryStore,
  | 'load'
  | 'record'
  | 'recordUntilStored'
  | 'recordIn'
  | 'signingSecrets'
  | 'failWithoutUrl'
  | 'failingSince'
  | 'hold'
  | 'park'
>;
/** Disables an endpoint (HTTP 410, long failure) and lets an account's released events through. */
export type EndpointPort = Pick<EndpointLifecycle, 'disable' | 'advanceIfFree'>;
export type WebhookPoster = Pick<WebhookHttpClient, 'post'>;
export type DeliverySlots = Pick<AccountConcurrency, 'acquire' | 'release' | 'hasRoom'>;
/** Takes the job of an event's previous delivery cycle off the dashboard once a redelivery starts. */
export type PreviousCycles = Pick<DeliveryQueue, 'retirePreviousCycle'>;
/** What the processor uses of a Bull job: its data, its options (the lane), and its log (the dashboard's attempt history). */
export type DeliveryJobHandle = Pick<Job<DeliveryJobData>, 'id' | 'data' | 'opts' | 'attemptsMade' | 'log'>;
