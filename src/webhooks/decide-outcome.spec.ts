import fc from 'fast-check';
import { type AttemptResult, decideOutcome } from 'src/webhooks/decide-outcome';
import { MAX_RETRY_AFTER_MS } from 'src/webhooks/retry-delay';

const SCHEDULE = [5_000, 300_000, 1_800_000];
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
