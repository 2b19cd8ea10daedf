import type { Request } from 'express';

/** The caller's address as limits key it: the socket's peer (`trust proxy` is off, so a header cannot forge it). */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}
