import type { Request } from 'express';
import { clientAddress } from 'src/auth/client-address';

function from(ip: string): Request {
  return { ip, socket: { remoteAddress: ip } } as unknown as Request;
}

describe('clientAddress', () => {
  it('counts every address of one IPv6 /64 as one source', () => {
    const keys = ['2001:db8:1:2::1', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:DB8:1:2:abcd::9'].map((ip) =>
      clientAddress(from(ip)),
    );
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBe('2001:db8:1:2::/64');
  });

  it('keeps IPv6 addresses of different /64s apart', () => {
    expect(clientAddress(from('2001:db8:1:2::1'))).not.toBe(clientAddress(from('2001:db8:1:3::1')));
  });

  it('keeps each IPv4 address on its own, also when it arrives IPv4-mapped on a dual-stack socket', () => {
    expect(clientAddress(from('203.0.113.7'))).toBe('203.0.113.7');
    expect(clientAddress(from('::ffff:203.0.113.7'))).toBe('203.0.113.7');
    expect(clientAddress(from('::ffff:203.0.113.8'))).toBe('203.0.113.8');
  });

  it('counts loopback ::1 by its /64 like any IPv6 address', () => {
    expect(clientAddress(from('::1'))).toBe('::/64');
  });
});
