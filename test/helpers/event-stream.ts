import { createParser } from 'eventsource-parser';

export const STREAM_PATH = '/api/v1/public/kyc/webhook-events/stream';

export interface StreamedMessage {
  id: string;
  event: string;
  data: {
    id: string;
    type: string;
    created_at: string;
    headers: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
    body: string;
  };
  /** Date.now() when it arrived. */
  at: number;
}

/** An open event stream read with a real SSE parser: every message and comment, as they arrive. */
export interface OpenStream {
  status: number;
  headers: Headers;
  messages: StreamedMessage[];
  comments: { text: string; at: number }[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
  waitForMessages(count: number, timeoutMs?: number): Promise<StreamedMessage[]>;
}

export async function openStream(
  baseUrl: string,
  secret: string,
  options: { lastEventId?: string; query?: string } = {},
): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}${STREAM_PATH}${options.query ?? ''}`, {
    headers: {
      authorization: `Bearer ${secret}`,
      ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}),
    },
    signal: controller.signal,
  });
  const messages: StreamedMessage[] = [];
  const comments: { text: string; at: number }[] = [];
  const parser = createParser({
    onEvent: (event) =>
      messages.push({ id: event.id ?? '', event: event.event ?? '', data: JSON.parse(event.data), at: Date.now() }),
    onComment: (text) => comments.push({ text, at: Date.now() }),
  });
  const ended = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body) parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // aborted by close()
    }
  })();
  return {
    status: res.status,
    headers: res.headers,
    messages,
    comments,
    ended,
    close: () => controller.abort(),
    async waitForMessages(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) {
          throw new Error(`stream: ${messages.length} of ${count} messages after ${timeoutMs} ms`);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return messages.slice(0, count);
    },
  };
}
