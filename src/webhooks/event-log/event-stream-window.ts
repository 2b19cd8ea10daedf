import type { StreamPosition, StreamRead } from 'src/webhooks/tables/event-rows';

/**
 * How far behind the newest event it sent a stream reads again. An event's created_at is set by the
 * process that writes it, before its statement commits (within the statements' time-outs and the
 * pool's wait), so an older event can commit after a newer one was streamed: it is still in this
 * window when its notification (or the safety re-read) comes.
 */
export const LOOKBACK_MS = 10_000;

/**
 * Which events a stream still owes: everything after its start (`floor`: the resumed event, or the
 * moment it opened) that it has not sent. It remembers the ids it sent within LOOKBACK_MS of the
 * newest one, so a late commit in that window is sent once and an early one is never sent twice.
 */
export class StreamWindow {
  private newest: number;
  private readonly sent = new Map<string, number>();

  constructor(private readonly floor: StreamPosition) {
    this.newest = floor.at.getTime();
  }

  next(): StreamRead {
    return { floor: this.floor, from: new Date(this.newest - LOOKBACK_MS), sent: [...this.sent.keys()] };
  }

  /** The rows of a read (in creation order) not sent before, now counted as sent. */
  accept<E extends { id: string; createdAt: Date }>(rows: readonly E[]): E[] {
    const fresh = rows.filter((row) => !this.sent.has(row.id));
    for (const row of fresh) {
      const at = row.createdAt.getTime();
      this.sent.set(row.id, at);
      if (at > this.newest) this.newest = at;
    }
    const oldest = this.newest - LOOKBACK_MS;
    for (const [id, at] of this.sent) if (at < oldest) this.sent.delete(id);
    return fresh;
  }
}

/** The contract's keep-alive comment. */
export const KEEP_ALIVE = ': keep-alive\n\n';

/** One event as an SSE message: its id, type, and a one-line JSON with the signed headers and exact body. */
export function streamMessage(
  event: { id: string; type: string; createdAt: Date; body: string },
  headers: Record<string, string>,
): string {
  const data = JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    headers: {
      'webhook-id': headers['webhook-id'],
      'webhook-timestamp': headers['webhook-timestamp'],
      'webhook-signature': headers['webhook-signature'],
    },
    body: event.body,
  });
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${data}\n\n`;
}
