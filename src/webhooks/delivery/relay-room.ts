/** The most of one account's events a relay pass queues, in windows (its maintenance slots); the rest wait their turn. */
export const PASS_SHARE_WINDOWS = 4;

/**
 * A relay pass's events (oldest first) split into those to queue now and those to set aside to wait
 * their turn: none of an account that holds `held` ≥ `window` slots (a worker would only set each
 * aside), and at most PASS_SHARE_WINDOWS windows of any other account's, its oldest.
 */
export function splitByRoom<T extends { accountId: string }>(
  events: T[],
  held: ReadonlyMap<string, number>,
  window: number,
): { queued: T[]; parked: T[] } {
  const room = new Map<string, number>();
  const queued: T[] = [];
  const parked: T[] = [];
  for (const event of events) {
    const id = event.accountId;
    const left = room.get(id) ?? ((held.get(id) ?? 0) >= window ? 0 : PASS_SHARE_WINDOWS * window);
    room.set(id, left - 1);
    (left > 0 ? queued : parked).push(event);
  }
  return { queued, parked };
}
