/** Where an attempt was when it failed: before the TCP connection, in the TLS handshake, or waiting for the status line. */
export type DeliveryPhase = 'connect' | 'tls' | 'response';

export const BLOCKED_ERROR = 'blocked: private address';
/** The error the client hands over when WEBHOOK_TIMEOUT_MS runs out (the same code as an OS time-out). */
export const TIMED_OUT = Object.freeze({ code: 'ETIMEDOUT', message: 'timed out' });

/** The column is varchar(500). */
const MAX_TEXT = 500;

/** The X.509 verification codes Node reports as an error's code (X509_V_ERR_* without the prefix). */
const CERTIFICATE_CODE =
  /^(CERT_|CRL_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT$|SELF_SIGNED_CERT_IN_CHAIN$|INVALID_CA$|INVALID_PURPOSE$|PATH_LENGTH_EXCEEDED$|HOSTNAME_MISMATCH$|ERROR_IN_CERT_)/;
/** `…:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:…`: the reason is the field after the function. */
const OPENSSL_REASON = /error:[0-9A-F]+:[^:]*routines:[^:]*:([^:]+)/i;
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

interface NodeErrorLike {
  code?: unknown;
  message?: unknown;
  syscall?: unknown;
}

function fieldOf(error: unknown, key: keyof NodeErrorLike): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const value = (error as NodeErrorLike)[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** `ERR_SSL_WRONG_VERSION_NUMBER` from `wrong version number`, as Node names OpenSSL's reasons. */
function sslCode(reason: string): string {
  return `ERR_SSL_${reason
    .trim()
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '_')}`;
}

/**
 * Advice Node.js appends to a certificate error for whoever runs it (Node 24 and 26: `; if the root
 * CA is installed locally, try running Node.js with --use-system-ca`): about our process, not the
 * client's certificate, so it is not part of the reason.
 */
const NODE_ADVICE = /; if the root CA is installed locally,.*$/;

/** `tls: <code> <reason>`, or null when the error is not about TLS. */
function tlsText(code: string | undefined, fullMessage: string, phase: DeliveryPhase): string | null {
  const message = fullMessage.replace(NODE_ADVICE, '');
  const openssl = OPENSSL_REASON.exec(message)?.[1]?.trim();
  if (openssl) return `tls: ${code?.startsWith('ERR_SSL_') ? code : sslCode(openssl)} ${openssl}`;
  const tlsCode =
    code !== undefined && (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || CERTIFICATE_CODE.test(code));
  if (tlsCode || (phase === 'tls' && code !== undefined)) return `tls: ${code} ${message}`.trim();
  return null;
}

/**
 * What a failed attempt's `error` and the event's `last_error` say, from the Node error and the phase
 * the attempt was in: the contract's forms, so that a client can tell what to fix on its side.
 */
export function describeDeliveryError(error: unknown, phase: DeliveryPhase): string {
  const code = fieldOf(error, 'code');
  const message = (fieldOf(error, 'message') ?? '')
    .replace(/\s+/g, ' ')
    .replace(/[\s:]+$/, '')
    .trim();
  if (code === 'EBLOCKED') return BLOCKED_ERROR;
  if (code === 'ETIMEDOUT') return `timeout: ${phase}`;
  if (fieldOf(error, 'syscall') === 'getaddrinfo' || code === 'ENOTFOUND' || code?.startsWith('EAI_')) {
    return `dns: ${code ?? 'lookup failed'}`;
  }
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code !== undefined && RESET_CODES.has(code)) return 'connection reset';
  const tls = tlsText(code, message, phase);
  if (tls) return tls.slice(0, MAX_TEXT);
  return (code ?? (message || 'network error')).slice(0, MAX_TEXT);
}

/** HTTP 410 Gone: the endpoint is gone for good, and is disabled (Standard Webhooks). */
export const GONE_ERROR = 'HTTP 410 (endpoint gone)';

/** An attempt's error from its status: null for a 2xx; a redirect is a failure, since it is not followed. */
export function describeStatus(status: number): string | null {
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return `redirect not followed (HTTP ${status})`;
  if (status === 410) return GONE_ERROR;
  return `HTTP ${status}`;
}
