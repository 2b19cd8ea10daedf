import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const VALID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's x-request-id when it is well-formed, otherwise a new one. */
export function requestIdFrom(header: string | string[] | undefined): string {
  return typeof header === 'string' && VALID.test(header) ? header : randomUUID();
}

export interface RequestWithId extends IncomingMessage {
  id?: string;
}

/** Reads the id the request-id middleware assigned (or makes one for very early failures). */
export function requestIdOf(req: RequestWithId, res?: ServerResponse): string {
  if (!req.id) {
    req.id = requestIdFrom(req.headers['x-request-id']);
    if (res && !res.headersSent) res.setHeader('x-request-id', req.id);
  }
  return req.id;
}
