import { parseRetrySchedule } from 'src/config/retry-schedule';

describe('parseRetrySchedule', () => {
  it('parses the default schedule', () => {
    expect(parseRetrySchedule('5s,5m,30m,2h,5h,10h,10h')).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
  });

  it('accepts every unit and spaces around items', () => {
    expect(parseRetrySchedule('250ms, 1s ,2m,1h')).toEqual([250, 1_000, 120_000, 3_600_000]);
  });

  it.each(['', ',', '5s,', '5', '5d', '-5s', '1.5s', 's', '0s', '5 s', '5S'])('refuses %p', (raw) => {
    expect(() => parseRetrySchedule(raw)).toThrow();
  });
});
