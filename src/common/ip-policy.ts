import ipaddr from 'ipaddr.js';

/**
 * True only for public unicast addresses. Loopback, private, link-local, CGNAT, multicast,
 * unspecified, reserved and IPv4-mapped/translated forms of those are all refused.
 */
export function isPublicUnicast(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (v6.range() === 'rfc6052' || v6.range() === 'rfc6145' || v6.range() === '6to4' || v6.range() === 'teredo') {
      return false;
    }
  }
  return parsed.range() === 'unicast';
}

export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}
