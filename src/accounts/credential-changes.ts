import { Counter, Gauge } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';

/** The NOTIFY channel of credential changes; the payload is `<account id> <change id>`. */
export const CREDENTIAL_CHANNEL = 'account_credentials';
/** Where each API process acknowledges a change it applied (the payload repeated). */
export const CREDENTIAL_ACK_CHANNEL = 'account_credentials_applied';
/** How the listener's session shows in pg_stat_activity (the rotation counts them). */
export const LISTENER_APPLICATION_NAME = 'kyc-credential-listener';

/** The listener's wait before reconnect attempt `failures` (0-based): 0.5 s doubling up to 10 s. */
export function reconnectDelayMs(failures: number): number {
  return Math.min(500 * 2 ** Math.min(failures, 10), 10_000);
}

export const credentialListenerUp = new Gauge({
  name: 'credential_listener_up',
  help: '1 while the credential-change listener is connected and listening (the credential cache is in use), else 0',
  registers: [metricsRegistry],
});

export const credentialLookups = new Counter({
  name: 'credential_lookups_total',
  help: 'Public API credential look-ups by source (cache, database)',
  labelNames: ['source'] as const,
  registers: [metricsRegistry],
});
