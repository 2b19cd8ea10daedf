import { Counter } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';

export const breakGlassUses = new Counter({
  name: 'kyc_break_glass_uses_total',
  help: 'Requests made with ADMIN_TOKEN (break-glass), on the admin API and the queue dashboard',
  registers: [metricsRegistry],
});

export const auditEntriesExpired = new Counter({
  name: 'kyc_audit_events_expired_total',
  help: 'Audit entries removed by AUDIT_RETENTION_DAYS, oldest first',
  registers: [metricsRegistry],
});
