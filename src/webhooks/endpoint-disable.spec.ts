import { endpointDisableReason } from 'src/webhooks/endpoint-disable';

const NOW = new Date('2026-11-26T12:00:00.000Z');
const DAY = 86_400_000;
const ago = (ms: number) => new Date(NOW.getTime() - ms);

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
    expect(endpointDisableReason({ outcome, failingSince, now: NOW, disableAfterMs })).toBe(expected);
  });
});
