import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  BLOCKED_ERROR,
  type DeliveryPhase,
  TIMED_OUT,
  describeDeliveryError,
  describeStatus,
} from 'src/webhooks/delivery/delivery-error';
import { guardedLookup, isIpLiteral, isPublicUnicast } from 'src/webhooks/delivery/ip-policy';

export const RESPONSE_BODY_LIMIT = 1024;
/** Read at most this much of a response before giving up on the connection. */
const RESPONSE_DRAIN_LIMIT = 64 * 1024;
/** The status line settles the attempt; its body, only an excerpt for the log, gets at most this long after it. */
export const RESPONSE_BODY_TIMEOUT_MS = 1_000;

export interface DeliveryResult {
  /** null on a network error or time-out. */
  responseStatus: number | null;
  /** null on success. */
  error: string | null;
  responseBody: string | null;
  durationMs: number;
  retryAfter: string | undefined;
}

export interface PostOptions {
  timeoutMs: number;
  allowPrivate: boolean;
  /** A kept-alive connection idle this long is closed (IDLE_SOCKET_MS unless given). */
  idleSocketMs?: number;
}

/** Below the idle limits of common load balancers and NAT gateways, which drop a connection silently or
 * with a reset once it has been idle that long; an endpoint's `Keep-Alive: timeout=N` closes it sooner. */
const IDLE_SOCKET_MS = 30_000;

/** How a reused keep-alive connection that the endpoint had closed fails. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * POSTs one webhook: no redirects, a hard time-out over connect, TLS and the status line, then a
 * short, capped read of the response body that never changes the outcome.
 */
export class WebhookHttpClient {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;
  private readonly lookup = guardedLookup();

  constructor(private readonly options: PostOptions) {
    // The agent's time-out closes idle pooled connections only (and, given, lets Node honour the
    // endpoint's Keep-Alive hint); a request in flight is bounded by timeoutMs alone.
    const pool = { keepAlive: true, maxFreeSockets: 256, scheduling: 'lifo' as const };
    const timeout = options.idleSocketMs ?? IDLE_SOCKET_MS;
    [this.httpAgent, this.httpsAgent] = [new http.Agent({ ...pool, timeout }), new https.Agent({ ...pool, timeout })];
  }

  post(target: string, headers: Record<string, string>, body: string): Promise<DeliveryResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failure = (error: string): DeliveryResult => ({
      responseStatus: null,
      error,
      responseBody: null,
      durationMs: elapsed(),
      retryAfter: undefined,
    });
    const resolved = resolveTarget(target, this.options.allowPrivate);
    if ('error' in resolved) return Promise.resolve(failure(resolved.error));
    const secure = resolved.url.protocol === 'https:';
    const controller = new AbortController();
    let phase: DeliveryPhase = 'connect';
    return new Promise<DeliveryResult>((resolve) => {
      let settled = false;
      let responded = false;
      let bodyTimer: NodeJS.Timeout | undefined;
      const finish = (result: DeliveryResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(bodyTimer);
        resolve(result);
      };
      const timer = setTimeout(() => {
        finish(failure(describeDeliveryError(TIMED_OUT, phase)));
        controller.abort();
      }, this.options.timeoutMs);
      const send = (fresh: boolean): void => {
        phase = 'connect';
        const request = this.buildRequest(resolved.url, headers, body, controller.signal, fresh);
        request.on('socket', (socket) => trackPhase(socket, secure, (next) => (phase = next)));
        // Once the status line is in, the outcome is decided: a reset in the body does not undo it.
        request.on('error', (error: NodeJS.ErrnoException) => {
          if (responded || settled) return;
          // A kept-alive connection the endpoint closed as idle fails as it is reused, before any answer: sent
          // again once, on a new connection (at least once: an endpoint that reset after reading it sees it twice).
          if (!fresh && request.reusedSocket && STALE_SOCKET_CODES.has(error.code ?? '')) return send(true);
          finish(failure(describeDeliveryError(error, phase)));
        });
        request.on('response', (response) => {
          responded = true;
          clearTimeout(timer);
          const left = this.options.timeoutMs - (performance.now() - started);
          bodyTimer = setTimeout(() => response.destroy(), Math.max(0, Math.min(RESPONSE_BODY_TIMEOUT_MS, left)));
          readCappedBody(response, (responseBody) => finish(responseResult(response, responseBody, elapsed())));
        });
        request.end(body);
      };
      send(false);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  private buildRequest(
    url: URL,
    headers: Record<string, string>,
    body: string,
    signal: AbortSignal,
    fresh: boolean,
  ): http.ClientRequest {
    const secure = url.protocol === 'https:';
    const pooled = secure ? this.httpsAgent : this.httpAgent;
    return (secure ? https : http).request(url, {
      method: 'POST',
      // A one-off connection, not from the pool (whose other idle ones may be as stale).
      agent: fresh ? false : pooled,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'kyc-webhooks/1' },
      signal,
      ...(this.options.allowPrivate ? {} : { lookup: this.lookup }),
    });
  }
}

/** The URL to POST to, or why there is none. */
function resolveTarget(target: string, allowPrivate: boolean): { url: URL } | { error: string } {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { error: 'invalid webhook_url' };
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // Node never calls the lookup for an IP literal, so those are checked here.
  if (!allowPrivate && isIpLiteral(host) && !isPublicUnicast(host)) return { error: BLOCKED_ERROR };
  return { url };
}

/** Keeps the first RESPONSE_BODY_LIMIT bytes; past RESPONSE_DRAIN_LIMIT read, drops the connection. Calls onDone at end or close. */
function readCappedBody(response: http.IncomingMessage, onDone: (body: string | null) => void): void {
  const chunks: Buffer[] = [];
  let kept = 0;
  let read = 0;
  response.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (kept < RESPONSE_BODY_LIMIT) {
      const part = chunk.subarray(0, RESPONSE_BODY_LIMIT - kept);
      chunks.push(part);
      kept += part.length;
    }
    if (read > RESPONSE_DRAIN_LIMIT) response.destroy();
  });
  const done = () => onDone(chunks.length ? Buffer.concat(chunks).toString('utf8').replaceAll('\u0000', '') : null);
  response.on('end', done);
  response.on('close', done);
  response.on('error', () => undefined);
}

function responseResult(
  response: http.IncomingMessage,
  responseBody: string | null,
  durationMs: number,
): DeliveryResult {
  const status = response.statusCode ?? 0;
  const header = response.headers['retry-after'];
  return {
    responseStatus: status,
    error: describeStatus(status),
    responseBody,
    durationMs,
    retryAfter: typeof header === 'string' ? header : undefined,
  };
}

/** Follows a new connection through TCP connect and the TLS handshake; a reused one is already past both. */
function trackPhase(socket: Socket, secure: boolean, enter: (phase: DeliveryPhase) => void): void {
  if (!socket.connecting) return enter('response');
  socket.once('connect', () => enter(secure ? 'tls' : 'response'));
  if (secure) socket.once('secureConnect', () => enter('response'));
}
