import { Counter } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';

export const verificationsRedacted = new Counter({
  name: 'verifications_redacted_total',
  help: 'Verifications whose personal data this process erased, by reason (client_request, retention)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const webhookEventsDeleted = new Counter({
  name: 'webhook_events_deleted_total',
  help: 'Delivered and failed webhook events (with their attempts) this process deleted past WEBHOOK_EVENT_RETENTION_DAYS',
  registers: [metricsRegistry],
});
