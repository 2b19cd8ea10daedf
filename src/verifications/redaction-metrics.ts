import { Counter } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';

export const verificationsRedacted = new Counter({
  name: 'verifications_redacted_total',
  help: 'Verifications whose personal data was erased, by reason (client_request, retention)',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});
