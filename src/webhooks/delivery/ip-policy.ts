import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { BLOCKED_ERROR } from 'src/webhooks/delivery/delivery-error';

const cidrs = (list: string[]) => list.map((cidr) => ipaddr.parseCIDR(cidr) as [ipaddr.IPv6, number]);

/** IANA's global unicast block: every IPv6 address outside it is refused (loopback, ULA, multicast...). */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

/**
 * Parts of 2000::/3 that are no ordinary Internet host. 6to4 and Teredo are refused whole, whatever
 * IPv4 address they embed: the packet is delivered by a relay we cannot see, and a webhook receiver
 * has a native address anyway. (NAT64 64:ff9b::/96 and 64:ff9b:1::/48, IPv4-compatible ::/96 and
 * IPv4-translated ::ffff:0:0:0/96 lie outside 2000::/3 and are refused for the same reason; in the
 * local-use NAT64 prefix the embedded IPv4 address need not even sit in a fixed place.)
 */
const NOT_INTERNET = cidrs([
  '2001::/23', // IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID, AMT...
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4
  '3ffe::/16', // the former 6bone
  '3fff::/20', // documentation
]);

/**
 * True only for public unicast addresses. Loopback, private, link-local, CGNAT, multicast,
 * unspecified and reserved IPv4 are refused; so is every IPv6 address outside global unicast or
 * inside a transition prefix that embeds an IPv4 address. The one embedding allowed is IPv4-mapped
 * (::ffff:a.b.c.d), which the kernel sends as plain IPv4, so it is judged as that IPv4 address.
 */
export function isPublicUnicast(address: string): boolean {
  const text = hexTail(address);
  if (!ipaddr.isValid(text)) return false;
  const parsed = ipaddr.parse(text);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.zoneId !== undefined) return false;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
  return v6.match(GLOBAL_UNICAST) && !NOT_INTERNET.some((range) => v6.match(range));
}

/**
 * Rewrites an IPv6 dotted-quad tail as two hex groups: ipaddr.js reads `::a.b.c.d` (IPv4-compatible)
 * as `::ffff:a.b.c.d` (IPv4-mapped), which would judge the wrong address.
 */
function hexTail(address: string): string {
  const match = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (!match) return address;
  if (!ipaddr.IPv4.isValidFourPartDecimal(match[2])) return '';
  const [a, b, c, d] = ipaddr.IPv4.parse(match[2]).octets;
  return `${match[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

export function isIpLiteral(host: string): boolean {
  return ipaddr.isValid(host.replace(/^\[|\]$/g, ''));
}

class BlockedAddressError extends Error {
  readonly code = 'EBLOCKED';
  constructor() {
    super(BLOCKED_ERROR);
  }
}

type Resolver = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A DNS lookup for the socket itself, so the address checked is the address connected to (no
 * rebinding window). Any non-public answer refuses the whole host.
 */
export function guardedLookup(resolve: Resolver = dnsLookup as Resolver): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0 || addresses.some((entry) => !isPublicUnicast(entry.address))) {
        return callback(new BlockedAddressError(), '', 0);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0].address, addresses[0].family);
    });
  };
}
