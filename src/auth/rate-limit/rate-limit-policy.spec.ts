import { clockWindowResetMs, decide, uncounted } from 'src/auth/rate-limit/rate-limit-policy';

describe('rate limit policy', () => {
  it('allows up to the limit and counts down', () => {
    expect(decide(3, { count: 1, resetMs: 59_001 })).toEqual({
      allowed: true,
      headers: { 'RateLimit-Limit': '3', 'RateLimit-Remaining': '2', 'RateLimit-Reset': '60' },
    });
    expect(decide(3, { count: 3, resetMs: 10_000 }).allowed).toBe(true);
    expect(decide(3, { count: 3, resetMs: 10_000 }).headers['RateLimit-Remaining']).toBe('0');
  });

  it('refuses over the limit with Retry-After equal to the reset', () => {
    const decision = decide(3, { count: 4, resetMs: 12_300 });
    expect(decision.allowed).toBe(false);
    expect(decision.headers).toMatchObject({
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '13',
      'Retry-After': '13',
    });
  });

  it('never announces a reset of 0 seconds', () => {
    expect(decide(1, { count: 2, resetMs: 0 }).headers['Retry-After']).toBe('1');
  });

  it('measures the clock minute left', () => {
    expect(clockWindowResetMs(120_000)).toBe(60_000);
    expect(clockWindowResetMs(120_000 + 59_999)).toBe(1);
  });

  it('an uncounted request shows the full allowance until the next minute', () => {
    const decision = uncounted(10, 120_000 + 15_000);
    expect(decision).toEqual({
      allowed: true,
      headers: { 'RateLimit-Limit': '10', 'RateLimit-Remaining': '10', 'RateLimit-Reset': '45' },
    });
  });
});
