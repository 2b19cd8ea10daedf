import { Counter, Gauge, Histogram } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';
import { DISABLE_REASONS } from 'src/webhooks/tables/webhook-endpoint.entity';

export const webhookDeliveries = new Counter({
  name: 'webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts by outcome (delivered, http_error, timeout, network_error, blocked, signing_key_error, no_webhook_url)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

export const webhookDeliveryLatency = new Histogram({
  name: 'webhook_delivery_latency_seconds',
  help: 'Time from the status change commit to the 2xx from the client endpoint',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 7200, 36000],
  registers: [metricsRegistry],
});

export const webhookRedeliveries = new Counter({
  name: 'webhook_redeliveries_total',
  help: 'Webhook events redelivered by clients (single and bulk redeliver, the CLI replay), limited by REDELIVERIES_PER_HOUR',
  registers: [metricsRegistry],
});

export const webhookQueueDepth = new Gauge({
  name: 'webhook_queue_jobs',
  help: 'Delivery queue jobs by state (waiting, active, delayed, failed)',
  labelNames: ['state'] as const,
  registers: [metricsRegistry],
});

export const webhookOutboxBacklog = new Gauge({
  name: 'webhook_outbox_backlog',
  help: 'Webhook events pending delivery whose next attempt is due, counted up to 10000 (10000 means at least that many)',
  registers: [metricsRegistry],
});

export const webhookOutboxWaiting = new Gauge({
  name: 'webhook_outbox_waiting',
  help: "Webhook events pending delivery that wait their account's turn (no due time yet: a bulk replay, a release, a retention pass, or parked behind the account's window), counted up to 10000",
  registers: [metricsRegistry],
});

export const webhookOutboxOldestDue = new Gauge({
  name: 'webhook_outbox_oldest_due_seconds',
  help: 'Seconds since the oldest pending webhook event became due (next_attempt_at), 0 when none is due',
  registers: [metricsRegistry],
});

/** Why a delivery cycle ended `failed`: the retry schedule used up, or no webhook URL to send to. */
export const FAILED_REASONS = ['schedule_exhausted', 'no_webhook_url'] as const;
export type FailedReason = (typeof FAILED_REASONS)[number];

export const webhookEventsFailed = new Counter({
  name: 'webhook_events_failed_total',
  help: 'Webhook event delivery cycles the worker ended failed, by reason (schedule_exhausted, no_webhook_url)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const webhookEventsDeleted = new Counter({
  name: 'webhook_events_deleted_total',
  help: 'Delivered and failed webhook events (with their attempts) deleted past WEBHOOK_EVENT_RETENTION_DAYS',
  registers: [metricsRegistry],
});

export const webhookEndpointDisables = new Counter({
  name: 'webhook_endpoint_disables_total',
  help: 'Webhook endpoints disabled, by reason (gone: HTTP 410; failing: WEBHOOK_DISABLE_AFTER; client; operator)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const webhookEndpointsDisabled = new Gauge({
  name: 'webhook_endpoints_disabled',
  help: 'Webhook endpoints disabled now, by reason (gone, failing, client, operator)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

// Exported at 0 from the start: Prometheus's increase() needs a sample before the first event to see it.
for (const reason of FAILED_REASONS) webhookEventsFailed.inc({ reason }, 0);
for (const reason of DISABLE_REASONS) webhookEndpointDisables.inc({ reason }, 0);
