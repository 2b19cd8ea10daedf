import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError } from 'src/common/api-error';

/** Longer than the 60 s idle time-out of common load balancers, so they close idle sockets first. */
const KEEP_ALIVE_MS = 65_000;
const HEADERS_MS = 10_000;

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** Errors Node raises before a request reaches Express (no request id yet, so a new one). */
function rawErrorFor(error: NodeJS.ErrnoException): ApiError {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return ApiError.requestTimeout();
  if (error.code === 'HPE_HEADER_OVERFLOW') return ApiError.headersTooLarge();
  return new ApiError('validation_failed', 'The request is not valid HTTP');
}

export function rawErrorResponse(error: NodeJS.ErrnoException, requestId: string = randomUUID()): string {
  const apiError = rawErrorFor(error);
  const body = JSON.stringify(apiError.toBody(requestId));
  return (
    `HTTP/1.1 ${apiError.status} ${REASONS[apiError.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`
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
