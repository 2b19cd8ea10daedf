import { hashTagOf, type RedisNode } from 'src/redis/redis-connection';
import { parseDuration, parseRetrySchedule } from 'src/config/retry-schedule';
import { parseOidcConfig, type OidcConfig } from 'src/config/oidc-config';

export type AppRole = 'all' | 'api' | 'worker';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface AppConfig {
  readonly nodeEnv: string;
  readonly port: number;
  readonly databaseUrl: string;
  /** Read replicas for list and detail reads (TypeORM replication); empty reads from DATABASE_URL. */
  readonly databaseReadUrls: readonly string[];
  readonly redisUrl: string;
  /** A Redis Cluster used instead of REDIS_URL; empty uses REDIS_URL. */
  readonly redisClusterNodes: readonly RedisNode[];
  readonly adminToken: string;
  readonly internalApiToken: string;
  /** 32 raw bytes each, newest first: the first encrypts, every one decrypts (a key rotation). */
  readonly secretEncryptionKeys: readonly Buffer[];
  readonly appRole: AppRole;
  readonly queuePrefix: string;
  readonly webhookTimeoutMs: number;
  readonly webhookConcurrency: number;
  readonly webhookMaxInFlightPerAccount: number;
  readonly webhookRetryScheduleMs: readonly number[];
  /** An endpoint failing longer than this is disabled once an event uses up its schedule; 0 never. */
  readonly webhookDisableAfterMs: number;
  readonly webhookAllowPrivateTargets: boolean;
  readonly webhookAllowInsecureUrls: boolean;
  readonly rateLimitPerMinute: number;
  /** Test events per account per minute; 0 is off. */
  readonly testEventsPerMinute: number;
  /** Open event streams per account on each API process. */
  readonly streamsPerAccount: number;
  /** Events one account may redeliver (single and bulk) per hour; 0 turns the limit off. */
  readonly redeliveriesPerHour: number;
  /** Failed admin, internal and dashboard credentials per source address per minute; 0 is off. */
  readonly authFailureLimitPerMinute: number;
  readonly logLevel: LogLevel;
  /** How often the outbox sweeper looks for events that are due but not queued. */
  readonly sweepIntervalMs: number;
  /** Verifications older than this many days (decided_at, else updated_at) are redacted; 0 is off. */
  readonly piiRetentionDays: number;
  /** Delivered and failed webhook events older than this many days are deleted; 0 keeps them. */
  readonly webhookEventRetentionDays: number;
  /** AUDIT_RETENTION_DAYS: audit entries older than this are removed, oldest first; 0 keeps the trail forever. */
  readonly auditRetentionDays: number;
  /** How often the worker runs the retention pass. */
  readonly retentionIntervalMs: number;
  /** RETENTION_BUDGET_PERCENT: the share of time a retention pass spends in its batches, resting the rest. */
  readonly retentionBudgetPercent: number;
  /** A request (headers and body) not fully received within this is answered 408 and closed. */
  readonly httpRequestTimeoutMs: number;
  /** Operators' OIDC access tokens (and the dashboard's login); null when OIDC_ISSUER_URL is unset. */
  readonly oidc: OidcConfig | null;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** A hundred years: a window past it is a typo, not a policy. */
const MAX_RETENTION_DAYS = 36_500;
export const DEFAULT_RETENTION_BUDGET_PERCENT = 3; // at 10 a first PII pass on a year put others' list p99 at 1.6-1.8 x, at 3 1.2 x (docs/performance.md)
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const ROLES: readonly AppRole[] = ['all', 'api', 'worker'];
/** Required; generated outside production (local-secrets.ts). */
export const REQUIRED_SECRETS = ['ADMIN_TOKEN', 'INTERNAL_API_TOKEN', 'SECRET_ENCRYPTION_KEY'] as const;

function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === '' ? fallback : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be an integer between ${min} and ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be an integer between ${min} and ${max}`);
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = text(env, name, 'false').toLowerCase();
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, 'must be true or false');
}

function url(env: Env, name: string, fallback: string, protocols: readonly string[]): string {
  const value = text(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use one of ${protocols.join(', ')}`);
  }
  return value;
}

function urlList(env: Env, name: string, protocols: readonly string[]): string[] {
  const raw = text(env, name, '');
  if (raw.trim() === '') return [];
  return raw.split(',').map((item) => url({ [name]: item.trim() }, name, '', protocols));
}

/** Any length the operator chooses, but it must fit a Bearer header as one word. */
function token(name: string, value: string): string {
  if (!/^[\x21-\x7e]+$/.test(value)) throw new ConfigError(name, 'must be printable ASCII without spaces');
  return value;
}

/** One key, or several during a rotation: comma-separated, newest first, no repeats. */
function encryptionKeys(value: string): Buffer[] {
  const keys = value.split(',').map((item) => item.trim());
  if (keys.some((key) => !/^[A-Za-z0-9+/]{43}=$/.test(key))) {
    throw new ConfigError(
      'SECRET_ENCRYPTION_KEY',
      'must be the base64 encoding of 32 bytes, or several such keys separated by commas (newest first)',
    );
  }
  const bytes = keys.map((key) => Buffer.from(key, 'base64'));
  // Two spellings of the same 32 bytes (the last character's unused bits) are the same key.
  if (new Set(bytes.map((key) => key.toString('hex'))).size !== keys.length) {
    throw new ConfigError('SECRET_ENCRYPTION_KEY', 'names a key twice');
  }
  return bytes;
}

/** `host:port,host:port,…`; IPv6 hosts in brackets. */
function clusterNodes(env: Env): RedisNode[] {
  const raw = text(env, 'REDIS_CLUSTER_NODES', '');
  if (raw.trim() === '') return [];
  return raw.split(',').map((item) => {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item.trim());
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) {
      throw new ConfigError('REDIS_CLUSTER_NODES', 'must be host:port pairs separated by commas, ports 1-65535');
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

/** Validates the environment once; the first problem stops the start with one line naming it. */
export function parseConfig(env: Env): AppConfig {
  const role = text(env, 'APP_ROLE', 'all') as AppRole;
  if (!ROLES.includes(role)) throw new ConfigError('APP_ROLE', 'must be one of all, api, worker');
  const logLevel = text(env, 'LOG_LEVEL', 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  let schedule: number[];
  try {
    schedule = parseRetrySchedule(text(env, 'WEBHOOK_RETRY_SCHEDULE', '5s,5m,30m,2h,5h,10h,10h'));
  } catch (error) {
    throw new ConfigError('WEBHOOK_RETRY_SCHEDULE', (error as Error).message);
  }
  let disableAfterMs: number;
  try {
    disableAfterMs = parseDuration(text(env, 'WEBHOOK_DISABLE_AFTER', '5d'));
  } catch (error) {
    throw new ConfigError('WEBHOOK_DISABLE_AFTER', (error as Error).message);
  }
  const queuePrefix = text(env, 'QUEUE_PREFIX', 'bull');
  if (!/^[A-Za-z0-9_.:{}-]{1,64}$/.test(queuePrefix)) {
    throw new ConfigError('QUEUE_PREFIX', 'must be 1-64 characters of letters, digits, _ . : - { }');
  }
  const redisClusterNodes = clusterNodes(env);
  // Bull's scripts touch several keys of the queue at once; a cluster runs them only in one slot.
  if (redisClusterNodes.length > 0 && hashTagOf(queuePrefix) === null) {
    throw new ConfigError('QUEUE_PREFIX', 'must contain a hash tag such as {kyc} when REDIS_CLUSTER_NODES is set');
  }
  for (const name of REQUIRED_SECRETS) {
    if (!env[name]) throw new ConfigError(name, 'is required');
  }
  return {
    nodeEnv: text(env, 'NODE_ENV', 'development'),
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl: url(env, 'DATABASE_URL', 'postgres://postgres@localhost:5432/kyc', ['postgres:', 'postgresql:']),
    databaseReadUrls: urlList(env, 'DATABASE_READ_URLS', ['postgres:', 'postgresql:']),
    redisUrl: url(env, 'REDIS_URL', 'redis://localhost:6379', ['redis:', 'rediss:']),
    redisClusterNodes,
    adminToken: token('ADMIN_TOKEN', env.ADMIN_TOKEN as string),
    internalApiToken: token('INTERNAL_API_TOKEN', env.INTERNAL_API_TOKEN as string),
    secretEncryptionKeys: encryptionKeys(env.SECRET_ENCRYPTION_KEY as string),
    appRole: role,
    queuePrefix,
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1, 600_000),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 50, 1, 10_000),
    webhookMaxInFlightPerAccount: integer(env, 'WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT', 10, 1, 10_000),
    webhookRetryScheduleMs: schedule,
    webhookDisableAfterMs: disableAfterMs,
    webhookAllowPrivateTargets: flag(env, 'WEBHOOK_ALLOW_PRIVATE_TARGETS'),
    webhookAllowInsecureUrls: flag(env, 'WEBHOOK_ALLOW_INSECURE_URLS'),
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 0, 10_000_000),
    testEventsPerMinute: integer(env, 'TEST_EVENTS_PER_MINUTE', 60, 0, 10_000_000),
    redeliveriesPerHour: integer(env, 'REDELIVERIES_PER_HOUR', 20_000, 0, 100_000_000),
    authFailureLimitPerMinute: integer(env, 'AUTH_FAILURE_LIMIT_PER_MINUTE', 20, 0, 10_000_000),
    streamsPerAccount: integer(env, 'STREAMS_PER_ACCOUNT', 5, 1, 10_000),
    logLevel,
    sweepIntervalMs: integer(env, 'OUTBOX_SWEEP_INTERVAL_MS', 5_000, 100, 3_600_000),
    piiRetentionDays: integer(env, 'PII_RETENTION_DAYS', 0, 0, MAX_RETENTION_DAYS),
    webhookEventRetentionDays: integer(env, 'WEBHOOK_EVENT_RETENTION_DAYS', 90, 0, MAX_RETENTION_DAYS),
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 2557, 0, MAX_RETENTION_DAYS),
    retentionIntervalMs: integer(env, 'RETENTION_INTERVAL_MS', 60_000, 100, 86_400_000),
    retentionBudgetPercent: integer(env, 'RETENTION_BUDGET_PERCENT', DEFAULT_RETENTION_BUDGET_PERCENT, 1, 100),
    httpRequestTimeoutMs: integer(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 1_000, 600_000),
    oidc: parseOidcConfig(env, (variable, reason) => new ConfigError(variable, reason)),
  };
}
