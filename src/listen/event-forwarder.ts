import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createParser } from 'eventsource-parser';
import type { ListenOptions } from 'src/listen/listen-args';
import { type LocalOutcome, eventLine, localError, summaryLine } from 'src/listen/listen-line';

const STREAM_PATH = '/api/v1/public/kyc/webhook-events/stream';
/** The local server gets as long as the service gives a webhook endpoint by default. */
const LOCAL_TIMEOUT_MS = 10_000;
/** Reconnect back-off: doubling from the first, up to the cap; reset by a stream that opened. */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_CAP_MS = 5_000;
/** No byte (not even a keep-alive, sent at least every 15 s) for this long: the connection is dead. */
const SILENCE_MS = 45_000;

interface StreamData {
  id: string;
  type: string;
  headers: Record<string, string>;
  body: string;
}

/** A stream refused for a reason a reconnect cannot fix (a bad secret, an unknown --since). */
export class ListenFatalError extends Error {}

/**
 * Reads the account's event stream and POSTs each event's body, with its signed headers, to the
 * local URL, one at a time in stream order, printing one line per event. The id of the last event
 * forwarded is written to the state file, and every (re)connect resumes after it.
 */
export class EventForwarder {
  forwarded = 0;
  succeeded = 0;
  private lastId?: string;
  private stopped = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly options: ListenOptions,
    private readonly out: (line: string) => void,
    private readonly err: (line: string) => void,
  ) {}

  async run(): Promise<void> {
    this.lastId = this.options.since ?? (await this.readState());
    let failures = 0;
    while (!this.stopped) {
      let opened = false;
      try {
        opened = await this.readStream();
        if (!this.stopped) this.err('kyc-listen: the stream ended; reconnecting');
      } catch (error) {
        if (error instanceof ListenFatalError) throw error;
        if (this.stopped) break;
        this.err(`kyc-listen: stream lost (${(error as Error).message})`);
      }
      failures = opened ? 0 : failures + 1;
      const delay = Math.min(BACKOFF_FIRST_MS * 2 ** Math.max(0, failures - 1), BACKOFF_CAP_MS);
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, opened ? BACKOFF_FIRST_MS : delay));
    }
  }

  stop(): string {
    this.stopped = true;
    this.abort.abort();
    return summaryLine(this.forwarded, this.succeeded);
  }

  /** One connection: true once it opened (the back-off starts afresh). */
  private async readStream(): Promise<boolean> {
    const { baseUrl, secret } = this.options;
    const res = await fetch(`${baseUrl}${STREAM_PATH}`, {
      headers: { authorization: `Bearer ${secret}`, ...(this.lastId ? { 'last-event-id': this.lastId } : {}) },
      signal: this.abort.signal,
    });
    if (res.status === 401 || res.status === 400) {
      const text = await res.text();
      throw new ListenFatalError(`kyc-listen: the service refused the stream (HTTP ${res.status}): ${text}`);
    }
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      throw new Error(`HTTP ${res.status}`);
    }
    this.err(
      `kyc-listen: connected to ${baseUrl}, forwarding to ${this.options.forwardTo}` +
        (this.lastId ? `, resuming after ${this.lastId}` : ''),
    );
    let queue = Promise.resolve();
    const parser = createParser({
      onEvent: (message) => {
        const data = JSON.parse(message.data) as StreamData;
        queue = queue.then(() => this.forward(data));
      },
    });
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    let silence = setTimeout(() => void reader.cancel(), SILENCE_MS);
    try {
      for (;;) {
        const { done, value } = await reader.read();
        clearTimeout(silence);
        if (done) break;
        silence = setTimeout(() => void reader.cancel(), SILENCE_MS);
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      clearTimeout(silence);
      await queue;
    }
    return true;
  }

  private async forward(event: StreamData): Promise<void> {
    if (this.stopped) return;
    const startedAt = Date.now();
    let outcome: LocalOutcome;
    try {
      const res = await fetch(this.options.forwardTo, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...event.headers },
        body: event.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(LOCAL_TIMEOUT_MS),
      });
      await res.body?.cancel();
      outcome = { status: res.status, durationMs: Date.now() - startedAt };
      if (res.status >= 200 && res.status < 300) this.succeeded += 1;
    } catch (error) {
      outcome = { error: localError(error), durationMs: Date.now() - startedAt };
    }
    this.forwarded += 1;
    this.lastId = event.id;
    await this.writeState(event.id);
    this.out(eventLine(new Date(), event.type, event.body, outcome));
  }

  private async readState(): Promise<string | undefined> {
    try {
      const state = JSON.parse(await readFile(this.options.stateFile, 'utf8')) as { last_event_id?: unknown };
      return typeof state.last_event_id === 'string' ? state.last_event_id : undefined;
    } catch {
      return undefined;
    }
  }

  /** Written whole, then renamed: a kill mid-write leaves the previous state, never half of one. */
  private async writeState(id: string): Promise<void> {
    const file = this.options.stateFile;
    await mkdir(dirname(file), { recursive: true });
    await writeFile(`${file}.tmp`, JSON.stringify({ last_event_id: id }) + '\n');
    await rename(`${file}.tmp`, file);
  }
}
