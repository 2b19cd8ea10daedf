import { Counter, Gauge } from 'prom-client';
import type { EntityManager } from 'typeorm';
import { metricsRegistry } from 'src/common/metrics';

/** The NOTIFY channel carrying the id of an account whose secrets or settings changed. */
export const CREDENTIAL_CHANNEL = 'account_credentials';

/** Sent inside the caller's transaction, so every listener hears it exactly when the change commits. */
export async function notifyCredentialChange(manager: EntityManager, accountId: string): Promise<void> {
  await manager.query('SELECT pg_notify($1, $2)', [CREDENTIAL_CHANNEL, accountId]);
}

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
