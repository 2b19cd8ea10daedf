import fc from 'fast-check';
import {
  type AttemptResult,
  EARLY_TOLERANCE_MS,
  type JobEvent,
  jobStep,
  MAX_RETRY_AFTER_MS,
  decideOutcome,
  endpointDisableReason,
  nextRetryDelay,
  parseRetryAfter,
} from 'src/webhooks/delivery/delivery-policy';
import { DeliveryRetry, retryBackoff, withJitter } from 'src/webhooks/queue/delivery-retry';

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

const NOW = new Date('2026-11-23T12:00:00.000Z');
const mid = () => 0.5;

function result(responseStatus: number | null, error: string | null, retryAfter?: string): AttemptResult {
  return { responseStatus, error, retryAfter };
}

describe('decideOutcome', () => {
  it('is delivered on success, whatever the attempt number', () => {
    for (const cycleAttempts of [1, 4, 99]) {
      expect(decideOutcome({ result: result(204, null), cycleAttempts, schedule: SCHEDULE, now: NOW }, mid)).toEqual({
        kind: 'delivered',
      });
    }
  });

  it('retries at now + the scheduled delay for this attempt', () => {
    expect(
      decideOutcome({ result: result(500, 'HTTP 500'), cycleAttempts: 2, schedule: SCHEDULE, now: NOW }, mid),
    ).toEqual({
      kind: 'retry',
      delayMs: 300_000,
      at: new Date(NOW.getTime() + 300_000),
    });
  });

  it('retries after a time-out or a network error like after an error status', () => {
    for (const failure of [
      result(null, 'timeout: response'),
      result(null, 'connection refused'),
      result(null, 'blocked: private address'),
    ]) {
      expect(decideOutcome({ result: failure, cycleAttempts: 1, schedule: SCHEDULE, now: NOW }, mid)).toMatchObject({
        kind: 'retry',
        delayMs: 5_000,
      });
    }
  });

  it('fails once the schedule is used up (schedule length + 1 attempts)', () => {
    expect(
      decideOutcome({ result: result(500, 'HTTP 500'), cycleAttempts: 4, schedule: SCHEDULE, now: NOW }, mid),
    ).toEqual({ kind: 'failed' });
    expect(
      decideOutcome({ result: result(503, 'HTTP 503', '60'), cycleAttempts: 4, schedule: SCHEDULE, now: NOW }, mid),
    ).toEqual({ kind: 'failed' });
  });

  it('lets a longer Retry-After (seconds or HTTP date) on 429/503 push the retry later, up to an hour', () => {
    expect(
      decideOutcome({ result: result(429, 'HTTP 429', '60'), cycleAttempts: 1, schedule: SCHEDULE, now: NOW }, mid),
    ).toMatchObject({ delayMs: 60_000 });
    const inTwoMinutes = new Date(NOW.getTime() + 120_000).toUTCString();
    expect(
      decideOutcome(
        { result: result(503, 'HTTP 503', inTwoMinutes), cycleAttempts: 1, schedule: SCHEDULE, now: NOW },
        mid,
      ),
    ).toMatchObject({ delayMs: 120_000 });
    expect(
      decideOutcome({ result: result(503, 'HTTP 503', '86400'), cycleAttempts: 1, schedule: SCHEDULE, now: NOW }, mid),
    ).toMatchObject({ delayMs: MAX_RETRY_AFTER_MS });
  });

  it('ignores Retry-After on other statuses and when shorter than the schedule', () => {
    expect(
      decideOutcome({ result: result(500, 'HTTP 500', '60'), cycleAttempts: 1, schedule: SCHEDULE, now: NOW }, mid),
    ).toMatchObject({ delayMs: 5_000 });
    expect(
      decideOutcome({ result: result(429, 'HTTP 429', '1'), cycleAttempts: 2, schedule: SCHEDULE, now: NOW }, mid),
    ).toMatchObject({ delayMs: 300_000 });
  });

  it('never retries earlier than now nor later than the schedule and the Retry-After cap allow', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: SCHEDULE.length }),
        fc.constantFrom(429, 503, 500, null),
        fc.option(fc.nat({ max: 200_000 }).map(String)),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (cycleAttempts, status, retryAfter, r) => {
          const outcome = decideOutcome(
            { result: result(status, 'failed', retryAfter ?? undefined), cycleAttempts, schedule: SCHEDULE, now: NOW },
            () => r,
          );
          if (outcome.kind !== 'retry') throw new Error(`expected a retry, got ${outcome.kind}`);
          expect(outcome.at.getTime() - NOW.getTime()).toBe(outcome.delayMs);
          expect(outcome.delayMs).toBeGreaterThanOrEqual(Math.floor(SCHEDULE[cycleAttempts - 1] * 0.8));
          expect(outcome.delayMs).toBeLessThanOrEqual(
            Math.max(Math.ceil(SCHEDULE[cycleAttempts - 1] * 1.2), MAX_RETRY_AFTER_MS),
          );
        },
      ),
    );
  });
});

const CHECKED_AT = new Date('2026-11-26T12:00:00.000Z');
const DAY = 86_400_000;
const ago = (ms: number) => new Date(CHECKED_AT.getTime() - ms);

describe('endpointDisableReason', () => {
  it.each([
    ['HTTP 410 (held), healthy endpoint', 'held', null, 5 * DAY, 'gone'],
    ['HTTP 410 with WEBHOOK_DISABLE_AFTER=0', 'held', null, 0, 'gone'],
    ['schedule used up, failing 6 days, limit 5 days', 'failed', ago(6 * DAY), 5 * DAY, 'failing'],
    ['schedule used up, failing 1 ms more than the limit', 'failed', ago(5 * DAY + 1), 5 * DAY, 'failing'],
    ['schedule used up, failing exactly the limit', 'failed', ago(5 * DAY), 5 * DAY, null],
    ['schedule used up, failing 1 ms less than the limit', 'failed', ago(5 * DAY - 1), 5 * DAY, null],
    [
      'schedule used up, failing_since in the future (clock skew between workers)',
      'failed',
      ago(-60_000),
      5 * DAY,
      null,
    ],
    ['schedule used up, a success since (failing_since null)', 'failed', null, 5 * DAY, null],
    ['schedule used up, WEBHOOK_DISABLE_AFTER=0 (never for failing)', 'failed', ago(365 * DAY), 0, null],
    ['a retry, failing for a year', 'retry', ago(365 * DAY), 5 * DAY, null],
    ['delivered', 'delivered', null, 5 * DAY, null],
  ] as const)('%s → %s', (_case, outcome, failingSince, disableAfterMs, expected) => {
    expect(endpointDisableReason({ outcome, failingSince, now: CHECKED_AT, disableAfterMs })).toBe(expected);
  });
});

describe('jobStep', () => {
  const at = 1_800_000_000_000;
  const row = (fields: Partial<JobEvent> = {}): JobEvent => ({
    cycle: 2,
    deliveryStatus: 'pending',
    cycleAttempts: 1,
    nextAttemptAt: new Date(at),
    disabledAt: null,
    ...fields,
  });

  it.each([
    ['the event is gone', undefined, 2, { step: 'skip' }],
    ['the job is of another cycle', row(), 1, { step: 'skip' }],
    ['held', row({ deliveryStatus: 'held', nextAttemptAt: null }), 2, { step: 'skip' }],
    ['waiting its turn (no due time)', row({ nextAttemptAt: null }), 2, { step: 'skip' }],
    ['delivered already', row({ deliveryStatus: 'delivered' }), 2, { step: 'delivered' }],
    [
      'due within the early tolerance',
      row({ nextAttemptAt: new Date(at + EARLY_TOLERANCE_MS) }),
      2,
      { step: 'attempt' },
    ],
    [
      'due more than the tolerance ahead',
      row({ nextAttemptAt: new Date(at + 5_000) }),
      2,
      { step: 'not-due', delayMs: 5_000 },
    ],
  ] as const)('%s', (_, event, cycle, expected) => {
    expect(jobStep(event, cycle, at)).toMatchObject(expected);
  });

  it('gives up on a failed cycle, counting one that never had an attempt (no webhook_url)', () => {
    const failed = row({ deliveryStatus: 'failed', cycleAttempts: 0 });
    expect(jobStep(failed, 2, at)).toEqual({ step: 'give-up', event: failed, noAttempt: true });
    expect(jobStep(row({ deliveryStatus: 'failed', cycleAttempts: 4 }), 2, at)).toMatchObject({ noAttempt: false });
  });

  it('holds a pending event whose endpoint is disabled, even one not due yet', () => {
    const disabled = row({ disabledAt: new Date(at), nextAttemptAt: new Date(at + 60_000) });
    expect(jobStep(disabled, 2, at)).toEqual({ step: 'hold', event: disabled });
  });

  it("retires the previous cycle's job on a new cycle's first attempt only", () => {
    expect(jobStep(row({ cycleAttempts: 0 }), 2, at)).toMatchObject({ step: 'attempt', retirePrevious: true });
    expect(jobStep(row({ cycleAttempts: 1 }), 2, at)).toMatchObject({ step: 'attempt', retirePrevious: false });
    expect(jobStep(row({ cycle: 1, cycleAttempts: 0 }), 1, at)).toMatchObject({ retirePrevious: false });
  });
});
