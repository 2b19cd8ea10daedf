import fc from 'fast-check';
import { MAX_RETRY_AFTER_MS, nextRetryDelay, parseRetryAfter, withJitter } from 'src/webhooks/retry-delay';
import { retryBackoff, DeliveryRetry } from 'src/webhooks/delivery-retry';

const SCHEDULE = [5_000, 300_000, 1_800_000];

describe('withJitter', () => {
  it('stays within ±20% and never reaches zero', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 36_000_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (delay, r) => {
          const jittered = withJitter(delay, () => r);
          expect(jittered).toBeGreaterThanOrEqual(Math.max(1, Math.floor(delay * 0.8)));
          expect(jittered).toBeLessThanOrEqual(Math.ceil(delay * 1.2));
        },
      ),
    );
  });

  it('spans the whole band', () => {
    expect(withJitter(1_000, () => 0)).toBe(800);
    expect(withJitter(1_000, () => 0.5)).toBe(1_000);
    expect(withJitter(1_000, () => 0.999999)).toBe(1_200);
  });
});

describe('nextRetryDelay', () => {
  const mid = () => 0.5;

  it('follows the schedule by attempts made in the cycle', () => {
    expect(nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 1, responseStatus: 500, retryAfterMs: null }, mid)).toBe(
      5_000,
    );
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 3, responseStatus: null, retryAfterMs: null }, mid),
    ).toBe(1_800_000);
  });

  it('gives up after the last scheduled delay (schedule length + 1 attempts)', () => {
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 4, responseStatus: 500, retryAfterMs: null }, mid),
    ).toBeNull();
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 0, responseStatus: 500, retryAfterMs: null }, mid),
    ).toBeNull();
  });

  it('honours a longer Retry-After on 429 and 503 only', () => {
    for (const status of [429, 503]) {
      expect(
        nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 1, responseStatus: status, retryAfterMs: 60_000 }, mid),
      ).toBe(60_000);
    }
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 1, responseStatus: 500, retryAfterMs: 60_000 }, mid),
    ).toBe(5_000);
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 1, responseStatus: 302, retryAfterMs: 60_000 }, mid),
    ).toBe(5_000);
  });

  it('ignores a Retry-After shorter than the scheduled delay', () => {
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 2, responseStatus: 429, retryAfterMs: 1_000 }, mid),
    ).toBe(300_000);
  });

  it('caps a Retry-After at one hour', () => {
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 1, responseStatus: 503, retryAfterMs: 86_400_000 }, mid),
    ).toBe(MAX_RETRY_AFTER_MS);
  });

  it('never brings an attempt earlier than a scheduled delay longer than the one-hour cap', () => {
    const long = [7_200_000, 18_000_000];
    // Scheduled 2 h; Retry-After 3 h is longer but honoured only up to 1 h, so the schedule stands.
    expect(
      nextRetryDelay({ schedule: long, cycleAttempts: 1, responseStatus: 429, retryAfterMs: 10_800_000 }, mid),
    ).toBe(7_200_000);
    expect(
      nextRetryDelay({ schedule: long, cycleAttempts: 2, responseStatus: 503, retryAfterMs: 21_600_000 }, mid),
    ).toBe(18_000_000);
  });

  it('is never shorter than the jittered schedule nor longer than it and the cap allow', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 36_000_000 }), { minLength: 1, maxLength: 8 }),
        fc.nat(),
        fc.constantFrom(429, 503, 500, 302, null),
        fc.option(fc.integer({ min: 0, max: 200_000_000 })),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (schedule, pick, responseStatus, retryAfterMs, r) => {
          const cycleAttempts = (pick % schedule.length) + 1;
          const scheduled = withJitter(schedule[cycleAttempts - 1] as number, () => r);
          const delay = nextRetryDelay({ schedule, cycleAttempts, responseStatus, retryAfterMs }, () => r) as number;
          expect(delay).toBeGreaterThanOrEqual(scheduled);
          expect(delay).toBeLessThanOrEqual(Math.max(scheduled, MAX_RETRY_AFTER_MS));
          const honoured = (responseStatus === 429 || responseStatus === 503) && retryAfterMs !== null;
          if (!honoured) expect(delay).toBe(scheduled);
        },
      ),
    );
  });

  it('still ends the cycle after the last attempt even with a Retry-After', () => {
    expect(
      nextRetryDelay({ schedule: SCHEDULE, cycleAttempts: 4, responseStatus: 429, retryAfterMs: 10_000 }, mid),
    ).toBeNull();
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it('reads delta seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('reads an HTTP date relative to now', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:00 GMT', now)).toBe(60_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
  });

  it('returns null for a missing or garbled header', () => {
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter('1.5', now)).toBeNull();
  });
});

describe('retryBackoff (the Bull strategy)', () => {
  it('uses the delay carried on the error', () => {
    expect(retryBackoff(3, new DeliveryRetry(1234, 'retry'))).toBe(1234);
  });

  it('backs off on unexpected errors', () => {
    const first = retryBackoff(0, new Error('database down'));
    expect(first).toBeGreaterThanOrEqual(800);
    expect(first).toBeLessThanOrEqual(1200);
    expect(retryBackoff(50, new Error('database down'))).toBeLessThanOrEqual(72_000);
  });
});
