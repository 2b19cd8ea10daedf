import { randomBytes } from 'node:crypto';
import { testDatabaseUrl, testRedisUrl } from '../../scripts/test-servers';

/** Settings every e2e run shares; the database and queue prefix are unique to the run (servers: TEST_DATABASE_URL, TEST_REDIS_URL). */
export function testRunEnv(runId: string): Record<string, string> {
  return {
    NODE_ENV: 'test',
    DATABASE_URL: testDatabaseUrl(`kyc_test_${runId}`),
    REDIS_URL: testRedisUrl(),
    QUEUE_PREFIX: `kyctest_${runId}`,
    ADMIN_TOKEN: `admin-${randomBytes(16).toString('hex')}`,
    INTERNAL_API_TOKEN: `internal-${randomBytes(16).toString('hex')}`,
    SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    // Many specs send wrong credentials on purpose from 127.0.0.1; test/security/limits.e2e-spec.ts turns it on.
    AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
  };
}
