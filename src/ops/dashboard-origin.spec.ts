import { isCrossSiteWrite } from 'src/ops/dashboard-origin';

const OWN = 'http://kyc.internal:3000';

describe('isCrossSiteWrite', () => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'put'])('refuses %s from another origin', (method) => {
    expect(isCrossSiteWrite({ method, origin: 'https://attacker.example', ownOrigin: OWN })).toBe(true);
  });

  it.each([
    ['another port', 'http://kyc.internal:3001'],
    ['another scheme than http or https', 'ws://kyc.internal:3000'],
    ['a subdomain', 'http://evil.kyc.internal:3000'],
    ['an opaque origin', 'null'],
    ['garbage', 'not a url'],
  ])('refuses an Origin of %s', (_label, origin) => {
    expect(isCrossSiteWrite({ method: 'POST', origin, ownOrigin: OWN })).toBe(true);
  });

  it.each(['cross-site', 'same-site', 'Cross-Site'])('refuses Sec-Fetch-Site %s, even with the own Origin', (site) => {
    expect(isCrossSiteWrite({ method: 'PUT', secFetchSite: site, ownOrigin: OWN })).toBe(true);
    expect(isCrossSiteWrite({ method: 'PUT', origin: OWN, secFetchSite: site, ownOrigin: OWN })).toBe(true);
  });

  it('allows the own origin, spelled with a default port or in upper case', () => {
    expect(isCrossSiteWrite({ method: 'PUT', origin: OWN, secFetchSite: 'same-origin', ownOrigin: OWN })).toBe(false);
    expect(
      isCrossSiteWrite({ method: 'PUT', origin: 'HTTP://KYC.internal', ownOrigin: 'http://kyc.internal:80' }),
    ).toBe(false);
  });

  it('allows its own https page reaching it over http (a proxy in front terminates TLS), only at its own host and port', () => {
    expect(isCrossSiteWrite({ method: 'POST', origin: 'https://kyc.example', ownOrigin: 'http://kyc.example' })).toBe(
      false,
    );
    expect(
      isCrossSiteWrite({ method: 'POST', origin: 'https://kyc.example', ownOrigin: 'http://kyc.example:443' }),
    ).toBe(false);
    expect(isCrossSiteWrite({ method: 'POST', origin: 'https://evil.example', ownOrigin: 'http://kyc.example' })).toBe(
      true,
    );
    expect(
      isCrossSiteWrite({ method: 'POST', origin: 'https://kyc.example:8443', ownOrigin: 'http://kyc.example' }),
    ).toBe(true);
    // Not the other way round: an http page is not the https service's.
    expect(isCrossSiteWrite({ method: 'POST', origin: 'http://kyc.example', ownOrigin: 'https://kyc.example' })).toBe(
      true,
    );
  });

  it('refuses an Origin when the service cannot tell its own (no Host header)', () => {
    expect(isCrossSiteWrite({ method: 'POST', origin: OWN })).toBe(true);
  });

  it('allows a request with neither Origin nor a foreign Sec-Fetch-Site (curl, a typed URL)', () => {
    expect(isCrossSiteWrite({ method: 'POST', ownOrigin: OWN })).toBe(false);
    expect(isCrossSiteWrite({ method: 'POST', secFetchSite: 'none', ownOrigin: OWN })).toBe(false);
    expect(isCrossSiteWrite({ method: 'POST', secFetchSite: 'same-origin', ownOrigin: OWN })).toBe(false);
  });

  it('never refuses a read', () => {
    for (const method of ['GET', 'HEAD']) {
      expect(
        isCrossSiteWrite({ method, origin: 'https://attacker.example', secFetchSite: 'cross-site', ownOrigin: OWN }),
      ).toBe(false);
    }
  });
});
