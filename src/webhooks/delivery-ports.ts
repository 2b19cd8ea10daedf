import type { Job } from 'bull';
import type { AccountSlots } from 'src/webhooks/account-slots';
import type { DeliveryJobData } from 'src/webhooks/delivery-job';
import type { DeliveryStore } from 'src/webhooks/delivery-store';
import type { EndpointStates } from 'src/webhooks/endpoint-states.service';
import type { WebhookDispatcher } from 'src/webhooks/webhook-dispatcher.service';
import type { WebhookHttpClient } from 'src/webhooks/webhook-http.client';

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
export type EndpointPort = Pick<EndpointStates, 'disable' | 'advance'>;
export type WebhookPoster = Pick<WebhookHttpClient, 'post'>;
export type DeliverySlots = Pick<AccountSlots, 'acquire' | 'release'>;
/** Takes the job of an event's previous delivery cycle off the dashboard once a redelivery starts. */
export type PreviousCycles = Pick<WebhookDispatcher, 'retirePreviousCycle'>;
/** What the processor uses of a Bull job: its data, and its log (the dashboard's attempt history). */
export type DeliveryJobHandle = Pick<Job<DeliveryJobData>, 'id' | 'data' | 'attemptsMade' | 'log'>;
