import { CREDENTIAL_LEASE_MS, CredentialCache } from 'src/accounts/credential-cache';
import { reconnectDelayMs } from 'src/accounts/credential-changes';

/** A trusted cache whose lease a heartbeat renews whenever the test moves the clock. */
function cacheAt(options: { maxEntries?: number; maxAgeMs?: number } = {}) {
  let time = 1_000_000;
  const cache = new CredentialCache({ ...options, now: () => time });
  const clock = {
    get now(): number {
      return time;
    },
    set now(value: number) {
      time = value;
      cache.renewLease(value);
    },
  };
  cache.trust(time);
  return { cache, clock };
}

describe('CredentialCache', () => {
  it('answers a stored secret until its own expiry, and never at or after it', () => {
    const { cache, clock } = cacheAt();
    expect(cache.set('h', 'acc', 2_000, cache.generation, clock.now)).toBe(true);
    clock.now += 1_999;
    expect(cache.get('h')).toBe('acc');
    clock.now += 1;
    expect(cache.get('h')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('counts the expiry from when the look-up started, not from when it answered', () => {
    const { cache, clock } = cacheAt();
    const startedAt = clock.now;
    clock.now += 300;
    cache.set('h', 'acc', 500, cache.generation, startedAt);
    clock.now += 199;
    expect(cache.get('h')).toBe('acc');
    clock.now += 1;
    expect(cache.get('h')).toBeUndefined();
  });

  it('does not store a secret that expired while the look-up ran', () => {
    const { cache, clock } = cacheAt();
    const startedAt = clock.now;
    clock.now += 50;
    expect(cache.set('h', 'acc', 50, cache.generation, startedAt)).toBe(false);
    expect(cache.set('h', 'acc', 0, cache.generation, clock.now)).toBe(false);
    expect(cache.get('h')).toBeUndefined();
  });

  it('drops an entry without expiry after the max age', () => {
    const { cache, clock } = cacheAt({ maxAgeMs: 60_000 });
    cache.set('h', 'acc', null, cache.generation, clock.now);
    clock.now += 59_999;
    expect(cache.get('h')).toBe('acc');
    clock.now += 1;
    expect(cache.get('h')).toBeUndefined();
  });

  it('does not store a look-up that began before an invalidation of any account', () => {
    const { cache, clock } = cacheAt();
    const before = cache.generation;
    cache.invalidateAccount('other');
    expect(cache.set('h', 'acc', null, before, clock.now)).toBe(false);
    expect(cache.get('h')).toBeUndefined();
    expect(cache.set('h', 'acc', null, cache.generation, clock.now)).toBe(true);
    expect(cache.get('h')).toBe('acc');
  });

  it('invalidating an account forgets all of its secrets and only those', () => {
    const { cache, clock } = cacheAt();
    cache.set('old', 'a', 10_000, cache.generation, clock.now);
    cache.set('new', 'a', null, cache.generation, clock.now);
    cache.set('theirs', 'b', null, cache.generation, clock.now);
    cache.invalidateAccount('a');
    expect([cache.get('old'), cache.get('new'), cache.get('theirs')]).toEqual([undefined, undefined, 'b']);
  });

  it('evicts the oldest entry beyond its bound', () => {
    const { cache, clock } = cacheAt({ maxEntries: 3 });
    for (const hash of ['1', '2', '3', '4']) cache.set(hash, `acc${hash}`, null, cache.generation, clock.now);
    expect(cache.size).toBe(3);
    expect(['1', '2', '3', '4'].map((hash) => cache.get(hash))).toEqual([undefined, 'acc2', 'acc3', 'acc4']);
    cache.set('2', 'acc2', null, cache.generation, clock.now);
    cache.set('5', 'acc5', null, cache.generation, clock.now);
    expect(['2', '3', '4', '5'].map((hash) => cache.get(hash))).toEqual(['acc2', undefined, 'acc4', 'acc5']);
  });

  it('is not used, and stores nothing, until trusted; trusting and distrusting start it empty', () => {
    const clock = { now: 0 };
    const cache = new CredentialCache({ now: () => clock.now });
    expect(cache.set('h', 'acc', null, cache.generation, clock.now)).toBe(false);
    cache.trust(clock.now);
    const inFlight = cache.generation;
    cache.set('h', 'acc', null, cache.generation, clock.now);
    cache.distrust();
    expect(cache.get('h')).toBeUndefined();
    expect(cache.set('h', 'acc', null, cache.generation, clock.now)).toBe(false);
    cache.trust(clock.now);
    expect(cache.get('h')).toBeUndefined();
    // A look-up that began before the outage must not land after the reconnect either.
    expect(cache.set('h', 'acc', null, inFlight, clock.now)).toBe(false);
  });
});

describe('CredentialCache lease', () => {
  it('answers only within the lease of the last answered round trip, counted from when it was sent', () => {
    const clock = { now: 0 };
    const cache = new CredentialCache({ now: () => clock.now });
    cache.trust(0);
    expect(cache.set('h', 'acc', null, cache.generation, 0)).toBe(true);
    clock.now = CREDENTIAL_LEASE_MS - 1;
    expect(cache.get('h')).toBe('acc');
    // The listener went silent: no heartbeat answered since.
    clock.now = CREDENTIAL_LEASE_MS;
    expect(cache.get('h')).toBeUndefined();
    expect(cache.isCurrent).toBe(false);
    expect(cache.isTrusted).toBe(true);
    // A heartbeat sent at 900 and answered now renews it until 900 + the lease.
    cache.renewLease(900);
    expect(cache.get('h')).toBe('acc');
    clock.now = 900 + CREDENTIAL_LEASE_MS;
    expect(cache.get('h')).toBeUndefined();
  });

  it('an older round trip answered late never shortens the lease, and distrust ends it', () => {
    const clock = { now: 0 };
    const cache = new CredentialCache({ now: () => clock.now });
    cache.trust(0);
    cache.renewLease(500);
    cache.renewLease(100);
    clock.now = 500 + CREDENTIAL_LEASE_MS - 1;
    expect(cache.isCurrent).toBe(true);
    cache.distrust();
    expect(cache.isCurrent).toBe(false);
  });
});

describe('reconnectDelayMs', () => {
  it('doubles from 0.5 s and stays at 10 s', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map(reconnectDelayMs)).toEqual([500, 1_000, 2_000, 4_000, 8_000, 10_000, 10_000]);
  });
});
