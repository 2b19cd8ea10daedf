/** Network-level failures: the dependency is unreachable, not the query wrong. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
]);

/**
 * PostgreSQL SQLSTATEs that mean "the server is not there for you right now": connection errors,
 * shutdown, too many connections, out of memory, a statement it gave up (55P03 lock_timeout,
 * 57014 statement_timeout): rolled back, so the request may be retried as it was; and a server that
 * is not the primary (25006 read_only_sql_transaction: a standby, or a primary being demoted;
 * KYC_NOT_PRIMARY: a connection refused by primary-only.ts).
 */
const PG_UNAVAILABLE = /^(?:08...|57P01|57P02|57P03|53300|53400|55P03|57014|25006|KYC_NOT_PRIMARY)$/;

const MESSAGES = [
  'connection terminated',
  'timeout exceeded when trying to connect',
  'connection timeout',
  'datasource is not initialized',
  'driver not connected',
  'client has encountered a connection error',
  'cannot use a pool after calling end',
  'connection is closed',
  'query read timeout',
  // pg's own connect time-out (connectionTimeoutMillis) on a server that accepts TCP but never answers.
  'timeout expired',
  // TypeORM releases a query runner whose connection emitted an error (a lost connection); the work's
  // next statement then fails with this, never for any other reason in this code.
  'query runner already released',
];

interface ErrorLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  driverError?: unknown;
  errors?: unknown;
}

/** True when an error (or anything it wraps) says PostgreSQL could not be reached or went away. */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (error === null || typeof error !== 'object' || depth > 5) return false;
  const e = error as ErrorLike;
  if (typeof e.code === 'string' && (NETWORK_CODES.has(e.code) || PG_UNAVAILABLE.test(e.code))) return true;
  if (typeof e.message === 'string') {
    const message = e.message.toLowerCase();
    if (MESSAGES.some((fragment) => message.includes(fragment))) return true;
  }
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(e.driverError, depth + 1) || isDatabaseUnavailable(e.cause, depth + 1);
}
