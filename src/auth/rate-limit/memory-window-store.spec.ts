import { fallbackStoreOf, MemoryWindowStore } from 'src/auth/rate-limit/memory-window-store';
import { decide } from 'src/auth/rate-limit/rate-limit-policy';

const MINUTE = 60_000;

describe('in-memory fixed-window store', () => {
  it('counts per key within a clock minute, with the time left in it', () => {
    const store = new MemoryWindowStore();
    const start = 5 * MINUTE;
    expect(store.hit('a', start + 15_000)).toEqual({ count: 1, resetMs: 45_000 });
    expect(store.hit('a', start + 20_000)).toEqual({ count: 2, resetMs: 40_000 });
    expect(store.hit('b', start + 59_999)).toEqual({ count: 1, resetMs: 1 });
  });

  it('drops every key when the window rolls', () => {
    const store = new MemoryWindowStore();
    store.hit('a', MINUTE - 1);
    store.hit('b', MINUTE - 1);
    expect(store.size).toBe(2);
    expect(store.hit('a', MINUTE)).toEqual({ count: 1, resetMs: MINUTE });
    expect(store.size).toBe(1);
  });

  it('never holds more keys than its cap: a new key past it is over any limit, known keys keep counting', () => {
    const store = new MemoryWindowStore(3);
    const now = 7 * MINUTE + 1_000;
    for (const key of ['a', 'b', 'c']) store.hit(key, now);
    for (let i = 0; i < 1_000; i += 1) {
      const sprayed = store.hit(`spray-${i}`, now);
      expect(decide(1_000_000, sprayed).allowed).toBe(false);
    }
    expect(store.size).toBe(3);
    expect(store.hit('a', now)).toEqual({ count: 2, resetMs: 59_000 });
    expect(store.hit('spray-0', 8 * MINUTE)).toEqual({ count: 1, resetMs: MINUTE });
  });

  it('reports a full allowance nowhere: the refused key shows 0 remaining and a Retry-After', () => {
    const store = new MemoryWindowStore(0);
    const decision = decide(5, store.hit('x', 30_000));
    expect(decision.headers).toMatchObject({ 'RateLimit-Remaining': '0', 'Retry-After': '30' });
  });
});

describe('fallbackStoreOf', () => {
  it('counts accounts apart from addresses, and each scope apart', () => {
    expect(fallbackStoreOf('ratelimit', 'account:0193a6f2-0000-7000-8000-000000000000')).toBe('ratelimit/account:');
    expect(fallbackStoreOf('ratelimit', 'address:10.0.0.1')).toBe('ratelimit/address:');
    expect(fallbackStoreOf('ratelimit', 'address:::1')).toBe('ratelimit/address:');
    expect(fallbackStoreOf('authfail', 'address:10.0.0.1')).toBe('authfail/address:');
  });

  it('keeps a full address store from refusing an account', () => {
    const stores = new Map<string, MemoryWindowStore>();
    const hit = (key: string) => {
      const name = fallbackStoreOf('ratelimit', key);
      if (!stores.has(name)) stores.set(name, new MemoryWindowStore(3));
      return (stores.get(name) as MemoryWindowStore).hit(key, 1_000);
    };
    for (let i = 0; i < 10; i += 1) hit(`address:10.0.0.${i}`);
    expect(hit('address:10.0.1.1').count).toBe(Number.POSITIVE_INFINITY);
    expect(hit('account:a').count).toBe(1);
  });
});

describe('MemoryWindowStore.take (several units at once, all or none)', () => {
  const HOUR = 3_600_000;

  it('takes what fits under the limit, refuses a take that would pass it whole, and rolls with the window', () => {
    const store = new MemoryWindowStore(10, HOUR);
    expect(store.take('account:a', 4, 5, 1_000)).toEqual({ taken: true, resetMs: HOUR - 1_000 });
    expect(store.take('account:a', 4, 5, 2_000).taken).toBe(false);
    expect(store.take('account:a', 1, 5, 3_000).taken).toBe(true);
    expect(store.take('account:a', 1, 5, 4_000).taken).toBe(false);
    expect(store.take('account:b', 5, 5, 4_000).taken).toBe(true);
    store.giveBack('account:a', 2, 5_000);
    expect(store.take('account:a', 2, 5, 6_000).taken).toBe(true);
    expect(store.take('account:a', 5, 5, HOUR + 1).taken).toBe(true);
  });
});
