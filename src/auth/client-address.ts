import ipaddr from 'ipaddr.js';
import type { Request } from 'express';

/**
 * The caller's address as limits key it: the socket's peer (`trust proxy` is off, so a header cannot
 * forge it). An IPv6 address counts by its /64, the block one subscriber gets, else each of its 2^64
 * addresses would have its own count; an IPv4 address, mapped into IPv6 or not, counts alone.
 */
export function clientAddress(req: Request): string {
  const address = req.ip ?? req.socket.remoteAddress ?? 'unknown';
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}
