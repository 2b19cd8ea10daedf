import { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the body had fully arrived. */
  at: number;
}

/** What to answer: a status (default 200), extra headers, a delay, or never answering at all. */
export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
  hang?: boolean;
}

export type Responder = (request: ReceivedRequest) => Reply;

/**
 * A real HTTP endpoint on 127.0.0.1 that records every webhook and answers as programmed: a fixed
 * reply, one per request in order (`replies`), or a function of the request.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private responder: Responder = () => ({ status: 200 });
  private readonly sockets = new Set<Socket>();
  private readonly waiters: Array<() => void> = [];
  private server?: Server;
  port = 0;

  static async start(path = '/hook'): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver(path);
    await receiver.listen();
    return receiver;
  }

  private constructor(private readonly path: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}${this.path}`;
  }

  /** Same endpoint, reached by a name (for the connect-time address checks). */
  urlWithHost(host: string): string {
    return `http://${host}:${this.port}${this.path}`;
  }

  respondWith(responder: Responder | Reply): void {
    this.responder = typeof responder === 'function' ? responder : () => responder;
  }

  /** Replies in order per event (its 1st delivery gets list[0], ...); then the last one repeats. */
  replies(list: Reply[]): void {
    this.responder = (request) => {
      const nth = this.for(String(request.headers['webhook-id'])).length - 1;
      return list[Math.min(nth, list.length - 1)];
    };
  }

  for(eventId: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.headers['webhook-id'] === eventId);
  }

  /** Resolves once `predicate` holds over the requests so far; fails after `timeoutMs`. */
  async waitFor(
    predicate: (requests: ReceivedRequest[]) => boolean,
    timeoutMs = 20_000,
    what = 'webhooks',
  ): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.requests)) {
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `timed out waiting for ${what}; received ${this.requests.length}: ${this.requests.map((r) => r.headers['webhook-id']).join(', ')}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.requests;
  }

  async waitForCount(eventId: string, count: number, timeoutMs = 20_000): Promise<ReceivedRequest[]> {
    await this.waitFor(() => this.for(eventId).length >= count, timeoutMs, `${count} deliveries of ${eventId}`);
    return this.for(eventId);
  }

  /** Cuts every open connection (requests left hanging fail with a reset); the endpoint stays up. */
  dropConnections(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private listen(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    return new Promise((resolve) =>
      server.listen(0, '127.0.0.1', () => {
        this.port = (server.address() as AddressInfo).port;
        resolve();
      }),
    );
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      this.requests.push(request);
      for (const wake of this.waiters.splice(0)) wake();
      const reply = this.responder(request);
      if (reply.hang) return;
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? 'ok');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  }
}

/** Verifies with the reference implementation, not our signer; returns the parsed body. */
export function verifySignature(secret: string, request: ReceivedRequest): unknown {
  return new Webhook(secret).verify(request.body, {
    'webhook-id': String(request.headers['webhook-id']),
    'webhook-timestamp': String(request.headers['webhook-timestamp']),
    'webhook-signature': String(request.headers['webhook-signature']),
  });
}
