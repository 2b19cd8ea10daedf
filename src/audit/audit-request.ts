import ipaddr from 'ipaddr.js';
import type { Request } from 'express';
import { currentRequest } from 'src/common/logging/log-context';
import { type Actor, SYSTEM } from 'src/http/actor';
import { requestIdOf } from 'src/http/request-id';

/** Who made an entry and from where: the request's actor, id and address; the system's outside a request. */
export interface AuditSource {
  actor: Actor;
  requestId: string | null;
  sourceIp: string | null;
}

type AuditedRequest = Request & { actor?: Actor };

/** The socket peer's address (`trust proxy` is off), an IPv4-mapped IPv6 address written as IPv4. */
function sourceIp(req: Request): string | null {
  const address = req.socket?.remoteAddress ?? null;
  if (address === null || !ipaddr.isValid(address)) return address;
  return ipaddr.process(address).toString();
}

export function sourceOf(req: Request): AuditSource {
  const actor = (req as AuditedRequest).actor ?? SYSTEM;
  return { actor, requestId: requestIdOf(req), sourceIp: actor.type === 'system' ? null : sourceIp(req) };
}

/** The source of the request being served (see log-context), or the system's when there is none. */
export function currentSource(): AuditSource {
  const req = currentRequest() as Request | undefined;
  return req?.socket ? sourceOf(req) : { actor: SYSTEM, requestId: null, sourceIp: null };
}
