import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const VALID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's x-request-id when it is well-formed, otherwise a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && VALID.test(header) ? header : randomUUID();
}

/** The id the request-id middleware stores on the request, read through this view. */
export type RequestWithId = Omit<IncomingMessage, 'id'> & { id?: unknown };

/** Reads the id the request-id middleware assigned (or makes one for very early failures). */
export function requestIdOf(req: IncomingMessage | RequestWithId, res?: ServerResponse): string {
  const request = req as RequestWithId;
  if (typeof request.id !== 'string' || request.id === '') {
    request.id = requestIdFrom(req.headers['x-request-id']);
    if (res && !res.headersSent) res.setHeader('x-request-id', request.id as string);
  }
  return request.id as string;
}
