/** The shapes of webhook_events rows that the repository hands to the queue and to event streams. */

/** An event as the queue needs it: from the change the outbox just wrote, or read back by SQL. */
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
