import { Counter } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';

export const verificationsRedacted = new Counter({
  name: 'verifications_redacted_total',
  help: 'Verifications whose personal data was erased, by reason (client_request, retention)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const retentionSkipped = new Counter({
  name: 'kyc_retention_skipped_total',
  help: 'Verifications past PII_RETENTION_DAYS that a retention pass left unredacted, by reason (legal_hold), once per pass',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});
retentionSkipped.inc({ reason: 'legal_hold' }, 0);
