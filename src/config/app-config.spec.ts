import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig, type Env } from 'src/config/app-config';
import { resolveLocalSecrets } from 'src/config/local-secrets';

const SECRETS: Env = {
  ADMIN_TOKEN: 'admin-token-0123456789',
  INTERNAL_API_TOKEN: 'internal-token-0123456789',
  SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
};

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The same 32 bytes spelled with the last character's two unused bits set differently. */
function nonCanonical(key: Buffer): string {
  const canonical = key.toString('base64');
  return canonical.slice(0, 42) + BASE64[BASE64.indexOf(canonical[42]) ^ 1] + '=';
}

function failure(env: Env): ConfigError {
  try {
    parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('parseConfig accepted a bad configuration');
}

describe('parseConfig', () => {
  it('applies the contract defaults', () => {
    const config = parseConfig(SECRETS);
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: 'postgres://postgres@localhost:5432/kyc',
      redisUrl: 'redis://localhost:6379',
      appRole: 'all',
      queuePrefix: 'bull',
      webhookTimeoutMs: 10_000,
      webhookConcurrency: 50,
      webhookMaxInFlightPerAccount: 10,
      webhookRetryScheduleMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      webhookAllowPrivateTargets: false,
      webhookAllowInsecureUrls: false,
      rateLimitPerMinute: 1200,
      testEventsPerMinute: 60,
      redeliveriesPerHour: 20_000,
      authFailureLimitPerMinute: 20,
      streamsPerAccount: 5,
      logLevel: 'info',
      adminToken: SECRETS.ADMIN_TOKEN,
      internalApiToken: SECRETS.INTERNAL_API_TOKEN,
    });
    expect(config.secretEncryptionKeys.map((key) => key.length)).toEqual([32]);
  });

  it('reads several SECRET_ENCRYPTION_KEY keys, newest first (a key rotation)', () => {
    const [newer, older] = [randomBytes(32), randomBytes(32)];
    const config = parseConfig({
      ...SECRETS,
      SECRET_ENCRYPTION_KEY: `${newer.toString('base64')}, ${older.toString('base64')}`,
    });
    expect(config.secretEncryptionKeys).toEqual([newer, older]);
  });

  it('takes a non-canonical base64 spelling of a key as that key (twice is naming it twice)', () => {
    const key = randomBytes(32);
    const twin = nonCanonical(key);
    expect(twin).not.toBe(key.toString('base64'));
    expect(parseConfig({ ...SECRETS, SECRET_ENCRYPTION_KEY: twin }).secretEncryptionKeys).toEqual([key]);
    const error = failure({ ...SECRETS, SECRET_ENCRYPTION_KEY: `${key.toString('base64')},${twin}` });
    expect(error.message).toBe('Invalid configuration: SECRET_ENCRYPTION_KEY names a key twice');
  });

  it('reads WEBHOOK_DISABLE_AFTER: 5d by default, 0 for never, units ms to d', () => {
    expect(parseConfig({ ...SECRETS }).webhookDisableAfterMs).toBe(432_000_000);
    expect(parseConfig({ ...SECRETS, WEBHOOK_DISABLE_AFTER: '0' }).webhookDisableAfterMs).toBe(0);
    expect(parseConfig({ ...SECRETS, WEBHOOK_DISABLE_AFTER: '250ms' }).webhookDisableAfterMs).toBe(250);
    expect(parseConfig({ ...SECRETS, WEBHOOK_DISABLE_AFTER: '90m' }).webhookDisableAfterMs).toBe(5_400_000);
  });

  it('reads every variable', () => {
    const config = parseConfig({
      ...SECRETS,
      PORT: '8080',
      DATABASE_URL: 'postgresql://u@db:5432/x',
      REDIS_URL: 'rediss://cache:6380',
      APP_ROLE: 'worker',
      QUEUE_PREFIX: 'q1',
      WEBHOOK_TIMEOUT_MS: '500',
      WEBHOOK_CONCURRENCY: '5',
      WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '2',
      WEBHOOK_RETRY_SCHEDULE: '1s,2s',
      WEBHOOK_DISABLE_AFTER: '36h',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_INSECURE_URLS: 'TRUE',
      RATE_LIMIT_PER_MINUTE: '0',
      TEST_EVENTS_PER_MINUTE: '3',
      AUTH_FAILURE_LIMIT_PER_MINUTE: '0',
      STREAMS_PER_ACCOUNT: '2',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 8080,
      databaseUrl: 'postgresql://u@db:5432/x',
      redisUrl: 'rediss://cache:6380',
      appRole: 'worker',
      queuePrefix: 'q1',
      webhookTimeoutMs: 500,
      webhookConcurrency: 5,
      webhookMaxInFlightPerAccount: 2,
      webhookRetryScheduleMs: [1_000, 2_000],
      webhookDisableAfterMs: 129_600_000,
      webhookAllowPrivateTargets: true,
      webhookAllowInsecureUrls: true,
      rateLimitPerMinute: 0,
      testEventsPerMinute: 3,
      authFailureLimitPerMinute: 0,
      streamsPerAccount: 2,
      logLevel: 'debug',
    });
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['REDIS_URL', 'http://x'],
    ['APP_ROLE', 'both'],
    ['QUEUE_PREFIX', 'has space'],
    ['WEBHOOK_TIMEOUT_MS', '0'],
    ['WEBHOOK_TIMEOUT_MS', '1.5'],
    ['WEBHOOK_CONCURRENCY', '-1'],
    ['WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT', 'ten'],
    ['WEBHOOK_RETRY_SCHEDULE', '5x'],
    ['WEBHOOK_DISABLE_AFTER', '5'],
    ['WEBHOOK_DISABLE_AFTER', '1.5d'],
    ['WEBHOOK_DISABLE_AFTER', '-1d'],
    ['WEBHOOK_DISABLE_AFTER', '5 days'],
    ['WEBHOOK_DISABLE_AFTER', '99999999999999999d'],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'yes'],
    ['WEBHOOK_ALLOW_INSECURE_URLS', 'maybe'],
    ['RATE_LIMIT_PER_MINUTE', '-5'],
    ['TEST_EVENTS_PER_MINUTE', '-1'],
    ['STREAMS_PER_ACCOUNT', '0'],
    ['TEST_EVENTS_PER_MINUTE', 'sixty'],
    ['REDELIVERIES_PER_HOUR', '-1'],
    ['REDELIVERIES_PER_HOUR', '1e4'],
    ['AUTH_FAILURE_LIMIT_PER_MINUTE', '2.5'],
    ['AUTH_FAILURE_LIMIT_PER_MINUTE', '20000000'],
    ['LOG_LEVEL', 'verbose'],
    ['ADMIN_TOKEN', 'has space'],
    ['INTERNAL_API_TOKEN', 'tab\there'],
    ['SECRET_ENCRYPTION_KEY', 'not-base64'],
    ['SECRET_ENCRYPTION_KEY', randomBytes(16).toString('base64')],
    ['SECRET_ENCRYPTION_KEY', `${SECRETS.SECRET_ENCRYPTION_KEY},not-base64`],
    ['SECRET_ENCRYPTION_KEY', `${SECRETS.SECRET_ENCRYPTION_KEY},`],
    ['SECRET_ENCRYPTION_KEY', `${SECRETS.SECRET_ENCRYPTION_KEY},${SECRETS.SECRET_ENCRYPTION_KEY}`],
  ])('%s=%p stops the start with one line naming it', (name, value) => {
    const error = failure({ ...SECRETS, [name]: value });
    expect(error.variable).toBe(name);
    expect(error.message).toContain(name);
    expect(error.message).not.toContain('\n');
  });

  it.each(['ADMIN_TOKEN', 'INTERNAL_API_TOKEN', 'SECRET_ENCRYPTION_KEY'])('%s is required', (name) => {
    expect(failure({ ...SECRETS, [name]: undefined }).variable).toBe(name);
  });
});

describe('resolveLocalSecrets', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kyc-config-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(['ADMIN_TOKEN', 'INTERNAL_API_TOKEN', 'SECRET_ENCRYPTION_KEY'])('production requires %s', (name) => {
    const file = join(dir, 'secrets.json');
    expect(() =>
      resolveLocalSecrets({ ...SECRETS, NODE_ENV: 'production', [name]: undefined }, file, () => undefined),
    ).toThrow(name);
    expect(existsSync(file)).toBe(false);
  });

  it('leaves a complete environment alone', () => {
    const file = join(dir, 'secrets.json');
    const env = { ...SECRETS, NODE_ENV: 'production' };
    expect(resolveLocalSecrets(env, file, () => undefined)).toBe(env);
    expect(existsSync(file)).toBe(false);
  });

  it('generates the secrets once, warns, and reuses them on the next start', () => {
    const file = join(dir, 'secrets.json');
    const lines: string[] = [];
    const first = resolveLocalSecrets({}, file, (line) => lines.push(line));
    expect(lines.some((line) => line.includes('WARNING'))).toBe(true);
    expect(lines.join('\n')).toContain('ADMIN_TOKEN');
    // The values are in the file only: no log line carries a secret.
    expect(lines.join('\n')).not.toContain(first.ADMIN_TOKEN as string);
    expect(lines.join('\n')).not.toContain(first.SECRET_ENCRYPTION_KEY as string);
    expect(lines.join('\n')).not.toContain(first.INTERNAL_API_TOKEN as string);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const config = parseConfig(first);
    expect(config.secretEncryptionKeys.map((key) => key.length)).toEqual([32]);

    const again: string[] = [];
    const second = resolveLocalSecrets({}, file, (line) => again.push(line));
    expect(second).toEqual(first);
    expect(again).toEqual([]);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      ADMIN_TOKEN: first.ADMIN_TOKEN,
      INTERNAL_API_TOKEN: first.INTERNAL_API_TOKEN,
      SECRET_ENCRYPTION_KEY: first.SECRET_ENCRYPTION_KEY,
    });
  });

  it('an explicit variable wins over the stored one', () => {
    const file = join(dir, 'secrets.json');
    resolveLocalSecrets({}, file, () => undefined);
    expect(resolveLocalSecrets({ ADMIN_TOKEN: 'explicit-admin-token-123' }, file, () => undefined).ADMIN_TOKEN).toBe(
      'explicit-admin-token-123',
    );
  });
});

describe('parseConfig: read replicas and the request time-out', () => {
  it('reads none by default and a comma-separated list otherwise', () => {
    expect(parseConfig(SECRETS)).toMatchObject({ databaseReadUrls: [], httpRequestTimeoutMs: 30_000 });
    const config = parseConfig({
      ...SECRETS,
      DATABASE_READ_URLS: 'postgres://r1:5432/kyc, postgresql://r2/kyc',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
    });
    expect(config.databaseReadUrls).toEqual(['postgres://r1:5432/kyc', 'postgresql://r2/kyc']);
    expect(config.httpRequestTimeoutMs).toBe(2_000);
  });

  it.each(['redis://r1', 'postgres://r1/kyc,,postgres://r2/kyc', 'not a url'])(
    'refuses DATABASE_READ_URLS=%s naming the variable',
    (value) => {
      expect(failure({ ...SECRETS, DATABASE_READ_URLS: value }).message).toMatch(
        /^Invalid configuration: DATABASE_READ_URLS /,
      );
    },
  );

  it('refuses a request time-out under a second', () => {
    expect(failure({ ...SECRETS, HTTP_REQUEST_TIMEOUT_MS: '10' }).message).toMatch(/HTTP_REQUEST_TIMEOUT_MS/);
  });
});

describe('parseConfig: retention', () => {
  it('keeps personal data until told otherwise and deletes finished events after 90 days', () => {
    expect(parseConfig(SECRETS)).toMatchObject({
      piiRetentionDays: 0,
      webhookEventRetentionDays: 90,
      retentionIntervalMs: 60_000,
    });
  });

  it('reads 0 (off), the bounds, and the pass interval', () => {
    expect(
      parseConfig({
        ...SECRETS,
        PII_RETENTION_DAYS: '0',
        WEBHOOK_EVENT_RETENTION_DAYS: '0',
        RETENTION_INTERVAL_MS: '100',
      }),
    ).toMatchObject({ piiRetentionDays: 0, webhookEventRetentionDays: 0, retentionIntervalMs: 100 });
    expect(parseConfig({ ...SECRETS, PII_RETENTION_DAYS: '36500', WEBHOOK_EVENT_RETENTION_DAYS: '1' })).toMatchObject({
      piiRetentionDays: 36_500,
      webhookEventRetentionDays: 1,
    });
    expect(parseConfig({ ...SECRETS, PII_RETENTION_DAYS: '30', WEBHOOK_EVENT_RETENTION_DAYS: '' })).toMatchObject({
      piiRetentionDays: 30,
      webhookEventRetentionDays: 90,
    });
  });

  it.each([
    ['PII_RETENTION_DAYS', '-1'],
    ['PII_RETENTION_DAYS', '1.5'],
    ['PII_RETENTION_DAYS', 'abc'],
    ['PII_RETENTION_DAYS', '30d'],
    ['PII_RETENTION_DAYS', ' 30'],
    ['PII_RETENTION_DAYS', '1e3'],
    ['PII_RETENTION_DAYS', '36501'],
    ['WEBHOOK_EVENT_RETENTION_DAYS', '-3'],
    ['WEBHOOK_EVENT_RETENTION_DAYS', '90.0'],
    ['WEBHOOK_EVENT_RETENTION_DAYS', '99999999999999999999'],
  ])('%s=%p stops the start with one line naming it and its range', (name, value) => {
    const error = failure({ ...SECRETS, [name]: value });
    expect(error.variable).toBe(name);
    expect(error.message).toBe(`Invalid configuration: ${name} must be an integer between 0 and 36500`);
  });

  it.each(['99', '0', '-100', '86400001'])('RETENTION_INTERVAL_MS=%p is refused naming it', (value) => {
    expect(failure({ ...SECRETS, RETENTION_INTERVAL_MS: value }).message).toBe(
      'Invalid configuration: RETENTION_INTERVAL_MS must be an integer between 100 and 86400000',
    );
  });

  it('a pass works 3 % of the time unless RETENTION_BUDGET_PERCENT says otherwise', () => {
    expect(parseConfig(SECRETS).retentionBudgetPercent).toBe(3);
    expect(parseConfig({ ...SECRETS, RETENTION_BUDGET_PERCENT: '100' }).retentionBudgetPercent).toBe(100);
    expect(parseConfig({ ...SECRETS, RETENTION_BUDGET_PERCENT: '1' }).retentionBudgetPercent).toBe(1);
  });

  it.each(['0', '101', '12.5', '25%'])('RETENTION_BUDGET_PERCENT=%p is refused naming it', (value) => {
    expect(failure({ ...SECRETS, RETENTION_BUDGET_PERCENT: value }).message).toBe(
      'Invalid configuration: RETENTION_BUDGET_PERCENT must be an integer between 1 and 100',
    );
  });
});

describe('parseConfig: Redis Cluster', () => {
  it('uses REDIS_URL unless REDIS_CLUSTER_NODES is set', () => {
    expect(parseConfig(SECRETS).redisClusterNodes).toEqual([]);
    const config = parseConfig({
      ...SECRETS,
      REDIS_CLUSTER_NODES: 'redis-1:7000, 10.0.0.2:7001,[::1]:7002',
      QUEUE_PREFIX: '{kyc}',
    });
    expect(config.redisClusterNodes).toEqual([
      { host: 'redis-1', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
  });

  it.each(['redis-1', 'redis-1:0', 'redis-1:65536', 'a:7000,,b:7001', 'redis://a:7000', 'a b:7000'])(
    'refuses REDIS_CLUSTER_NODES=%s naming the variable',
    (value) => {
      const error = failure({ ...SECRETS, REDIS_CLUSTER_NODES: value, QUEUE_PREFIX: '{kyc}' });
      expect(error.variable).toBe('REDIS_CLUSTER_NODES');
      expect(error.message).not.toContain('\n');
    },
  );

  it.each(['bull', '{}kyc', 'kyc}{'])('refuses QUEUE_PREFIX=%s without a hash tag on a cluster', (prefix) => {
    const error = failure({ ...SECRETS, REDIS_CLUSTER_NODES: 'a:7000', QUEUE_PREFIX: prefix });
    expect(error.variable).toBe('QUEUE_PREFIX');
    expect(error.message).toBe(
      'Invalid configuration: QUEUE_PREFIX must contain a hash tag such as {kyc} when REDIS_CLUSTER_NODES is set',
    );
  });
});
