import { createHash } from 'node:crypto';

/** What every bench's service, seeders and floors agree on: derived, so a re-run knows every credential. */

function digest(label: string): Buffer {
  return createHash('sha256').update(`kyc-bench:${label}`).digest();
}

/** Account i's webhook secret, also its Bearer credential on the public API. */
export function benchSecret(accountIndex: number): string {
  return `whsec_${digest(`secret:${accountIndex}`).toString('base64')}`;
}

export const BENCH_SECRET_ENCRYPTION_KEY = digest('secret-encryption-key').toString('base64');
export const BENCH_ADMIN_TOKEN = digest('admin-token').toString('base64url');
export const BENCH_INTERNAL_API_TOKEN = digest('internal-api-token').toString('base64url');
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

type Env = Record<string, string>;

/**
 * The service as the benches run it: production mode, logs at warn, the rate limiter off, webhooks
 * to the bench's receiver on 127.0.0.1 over plain HTTP allowed; `extra` over these.
 */
export function serviceEnv(databaseUrl: string, queuePrefix: string, extra: Env = {}): Env {
  return {
    NODE_ENV: 'production',
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '0',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    INTERNAL_API_TOKEN: BENCH_INTERNAL_API_TOKEN,
    SECRET_ENCRYPTION_KEY: BENCH_SECRET_ENCRYPTION_KEY,
    ...extra,
  };
}
