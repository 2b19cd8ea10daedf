import { CredentialCache } from 'src/accounts/credential-cache';

describe('CredentialCache', () => {
  let now = 1_000_000;
  const cache = (): CredentialCache => new CredentialCache(1_000, 3, () => now);

  beforeEach(() => {
    now = 1_000_000;
  });

  it('returns a cached account until the time-to-live passes', () => {
    const c = cache();
    c.set('k', 'acc', null);
    expect(c.get('k')).toBe('acc');
    now += 999;
    expect(c.get('k')).toBe('acc');
    now += 1;
    expect(c.get('k')).toBeNull();
  });

  it('honours the secret expiry exactly, even inside the time-to-live', () => {
    const c = cache();
    c.set('k', 'acc', new Date(now + 10));
    now += 9;
    expect(c.get('k')).toBe('acc');
    now += 1;
    expect(c.get('k')).toBeNull();
  });

  it('forgets every entry of a rotated account and only those', () => {
    const c = cache();
    c.set('a1', 'acc-a', null);
    c.set('a2', 'acc-a', null);
    c.set('b', 'acc-b', null);
    c.forgetAccount('acc-a');
    expect([c.get('a1'), c.get('a2'), c.get('b')]).toEqual([null, null, 'acc-b']);
  });

  it('stays bounded and caches nothing with a zero time-to-live', () => {
    const c = cache();
    for (const key of ['1', '2', '3', '4']) c.set(key, `acc-${key}`, null);
    expect(c.get('4')).toBe('acc-4');
    expect(c.get('1')).toBeNull();
    const off = new CredentialCache(0, 3, () => now);
    off.set('k', 'acc', null);
    expect(off.get('k')).toBeNull();
  });
});
