import type { ServerResponse } from 'node:http';
import { KEEP_ALIVE, type StreamWindow, streamMessage } from 'src/webhooks/event-log/event-stream-window';
import { type StreamRead, type StreamedEvent } from 'src/webhooks/tables/event-rows';

/** Events read at once; a full page is followed by the next at once (a long replay). */
const PAGE = 200;
/** Wake-ups within this are served by one read (a burst of commits). */
const COALESCE_MS = 20;

/** What a stream needs of the service: its reads, the signing, and where a failure is reported. */
export interface StreamSource {
  read(accountId: string, read: StreamRead, limit: number): Promise<StreamedEvent[]>;
  /** The event's Standard Webhooks headers, made now with the account's active secrets. */
  headersOf(event: StreamedEvent): Record<string, string>;
  failed(accountId: string, error: unknown): void;
}

/**
 * One open stream: on each wake-up it reads what it still owes (its StreamWindow) and writes it,
 * one read at a time; wake-ups during a read cause one more read after it. A failed read ends the
 * stream (the client resumes from its last event), so an event is never skipped silently.
 */
export class EventStream {
  private reading = false;
  private again = false;
  private timer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    readonly accountId: string,
    private readonly res: ServerResponse,
    private readonly window: StreamWindow,
    private readonly source: StreamSource,
  ) {
    res.once('close', () => this.end());
  }

  wake(): void {
    if (this.closed) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.pump();
    }, COALESCE_MS);
  }

  keepAlive(): void {
    if (this.open) this.res.write(KEEP_ALIVE);
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    if (!this.res.writableEnded) this.res.end();
  }

  /** False once ended here, by the client, or by the HTTP drain (which ends the response itself). */
  private get open(): boolean {
    return !this.closed && !this.res.writableEnded;
  }

  private async pump(): Promise<void> {
    this.reading = true;
    try {
      do {
        this.again = false;
        const rows = await this.source.read(this.accountId, this.window.next(), PAGE);
        for (const event of this.window.accept(rows)) {
          if (!this.open) return;
          if (!this.res.write(streamMessage(event, this.source.headersOf(event)))) await this.drained();
        }
        if (rows.length === PAGE) this.again = true;
      } while (this.again && this.open);
    } catch (error) {
      this.source.failed(this.accountId, error);
      this.end();
    } finally {
      this.reading = false;
    }
  }

  /** A slow reader: the next page waits until the socket has taken this one. */
  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.once('drain', done);
      this.res.once('close', done);
    });
  }
}
