const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses one duration such as `5d` or `90m` (units ms, s, m, h, d), or `0`, into milliseconds. */
export function parseDuration(raw: string): number {
  const value = raw.trim();
  if (value === '0') return 0;
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value);
  if (!match) throw new Error(`"${value}" is not a duration (a number and one of the units ms, s, m, h, d, or 0)`);
  const ms = Number(match[1]) * UNIT_MS[match[2]];
  if (!Number.isSafeInteger(ms)) throw new Error(`"${value}" is too long`);
  return ms;
}

/** Parses `5s,5m,30m,2h` into delays in milliseconds; throws with a readable reason. */
export function parseRetrySchedule(raw: string): number[] {
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => part === '')) {
    throw new Error('must be a comma-separated list of durations such as 5s,5m,30m');
  }
  return parts.map((part) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(part);
    if (!match) throw new Error(`"${part}" is not a duration (units ms, s, m, h)`);
    const ms = Number(match[1]) * UNIT_MS[match[2]];
    if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`"${part}" must be greater than zero`);
    return ms;
  });
}
