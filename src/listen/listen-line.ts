/** How the local server answered one forwarded event: its status and time, or why it could not. */
export type LocalOutcome = { status: number; durationMs: number } | { error: string; durationMs: number };

interface Payload {
  test?: boolean;
  data?: { previous_status?: string | null; reason?: string; verification?: { id?: string; status?: string } };
}

function parsed(body: string): Payload {
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null ? (value as Payload) : {};
  } catch {
    return {};
  }
}

/** Why a POST to the local server failed, in a few words. */
export function localError(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'local server down (connection refused)';
  if ((error as Error).name === 'TimeoutError') return 'local server timed out';
  return `local server unreachable (${cause?.code ?? (error as Error).message})`;
}

/**
 * One event's line: time, type, verification id, `previous → new` status (or the redaction's
 * reason), and what the local server answered.
 */
export function eventLine(at: Date, type: string, body: string, outcome: LocalOutcome): string {
  const { test, data } = parsed(body);
  const verification = data?.verification?.id ?? '-';
  const change =
    data?.reason !== undefined
      ? `redacted (${data.reason})`
      : `${data?.previous_status ?? '∅'} → ${data?.verification?.status ?? '?'}`;
  const local = 'status' in outcome ? `${outcome.status}` : outcome.error;
  return [
    at.toISOString(),
    type + (test ? ' (test)' : ''),
    verification,
    change,
    `${local} in ${outcome.durationMs} ms`,
  ].join('  ');
}

/** What Ctrl-C prints. */
export function summaryLine(forwarded: number, succeeded: number): string {
  return `forwarded ${forwarded} event${forwarded === 1 ? '' : 's'}, ${succeeded} answered 2xx`;
}
