/** The shapes of webhook_events rows that the repository hands to the queue and to event streams. */

/** An event as the queue needs it (see `deliveryJobSource`). */
export interface DeliveryJobSource {
  id: string;
  cycle: number;
  type: string;
  accountId: string;
  verificationId: string;
  test: boolean;
  previousStatus: string | null;
  status: string | null;
  /** A `verification.redacted` event's reason; null for a status change. */
  reason: string | null;
  webhookUrl: string | null;
}

/** A promotion's jobs to queue, and the accounts it passed over because another promotion of theirs was under way. */
export type Promotion = { jobs: DeliveryJobSource[]; busy: string[] };

/** What the queue reads of an event's row: its columns, its body, and its account's webhook URL. */
export interface EventForJob {
  id: string;
  cycle: number;
  type: string;
  accountId: string;
  verificationId: string;
  body: string;
  webhookUrl: string | null;
}

/** The fields of a payload (as the outbox builds it) that the queue's jobs show. */
interface JobPayload {
  test?: unknown;
  data?: { previous_status?: unknown; reason?: unknown; verification?: { status?: unknown } };
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/**
 * The one reading of an event for the queue, by its body: for an event the outbox has just built
 * and for one read back by SQL (the relay, redeliveries, releases), so the two never disagree. A
 * redacted or hand-written body lacks some fields: they read as null.
 */
export function deliveryJobSource(event: EventForJob): DeliveryJobSource {
  const payload = JSON.parse(event.body) as JobPayload | null;
  const data = payload?.data;
  return {
    id: event.id,
    cycle: event.cycle,
    type: event.type,
    accountId: event.accountId,
    verificationId: event.verificationId,
    test: payload?.test === true,
    previousStatus: text(data?.previous_status),
    status: text(data?.verification?.status),
    reason: text(data?.reason),
    webhookUrl: event.webhookUrl,
  };
}

/** A stored event of a verification being redacted: its id and the body to rewrite. */
export interface StoredEventBody {
  id: string;
  verificationId: string;
  body: string;
}

/** An event's place in creation order. */
export interface StreamPosition {
  at: Date;
  id: string;
}

/** An event as a stream reads it, with its account's active secrets (ciphertexts, newest first). */
export interface StreamedEvent {
  id: string;
  type: string;
  createdAt: Date;
  body: string;
  secretCiphertexts: string[];
}

/** What a stream's next read asks for: events after `floor`, created from `from` on, except `sent`. */
export interface StreamRead {
  floor: StreamPosition;
  from: Date;
  sent: string[];
}
