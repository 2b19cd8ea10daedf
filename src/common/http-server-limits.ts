import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Longer than the 60 s idle time-out of common load balancers, so they close idle sockets first. */
const KEEP_ALIVE_MS = 65_000;
const HEADERS_MS = 10_000;

interface RawError {
  status: number;
  reason: string;
  code: string;
  message: string;
}

/** Errors Node raises before a request reaches Express (no request id yet, so a new one). */
function rawErrorFor(error: NodeJS.ErrnoException): RawError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      reason: 'Request Timeout',
      code: 'request_timeout',
      message: 'The request was not received in time',
    };
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      reason: 'Request Header Fields Too Large',
      code: 'payload_too_large',
      message: 'Request headers are too large',
    };
  }
  return { status: 400, reason: 'Bad Request', code: 'validation_failed', message: 'The request is not valid HTTP' };
}

export function rawErrorResponse(error: NodeJS.ErrnoException, requestId: string = randomUUID()): string {
  const { status, reason, code, message } = rawErrorFor(error);
  const body = JSON.stringify({ error: { code, message, details: [], request_id: requestId } });
  return (
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
  );
}

/**
 * Slow or malformed clients cannot hold the server: a request (headers and body) must arrive
 * within `requestTimeoutMs`, headers within 10 s, and Node's own early errors (time-out, headers
 * too large, bad HTTP) still get the contract's error body. Call before listen.
 */
export function applyServerLimits(server: Server, requestTimeoutMs: number): void {
  server.requestTimeout = requestTimeoutMs;
  server.headersTimeout = Math.min(HEADERS_MS, requestTimeoutMs);
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  // Node checks the time-outs on this interval (30 s by default, far coarser than the limits).
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(
    1_000,
    Math.floor(requestTimeoutMs / 2),
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code !== 'ECONNRESET' && socket.writable && socket.bytesWritten === 0) {
      socket.end(rawErrorResponse(error));
    }
    socket.destroy();
  });
}
