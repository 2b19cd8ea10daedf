import { Injectable } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** While draining, connections that went idle are looked for this often (besides after each answer). */
const IDLE_SWEEP_MS = 100;

/** What a drain did, for the exit line. */
export interface DrainFigures {
  /** Requests answered after the drain began (read before it, or on a connection busy at it). */
  answered: number;
  /** Requests read and never answered: their connections were destroyed at the deadline. */
  abandoned: number;
  durationMs: number;
}

/**
 * Graceful close of the HTTP server under keep-alive load. `Server.close()` alone stops the
 * listener but lets busy keep-alive connections take request after request; here, from the drain
 * on, every response not yet started carries `Connection: close` (Node then closes its socket
 * after it), and every connection that is or becomes idle is closed. A connection whose request
 * was read is left to answer it, unless the deadline passes.
 */
@Injectable()
export class HttpDrain {
  private server?: Server;
  private readonly unanswered = new Set<ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private startedAt = 0;
  private answered = 0;

  /** True from the drain's start: readiness answers 503. */
  get draining(): boolean {
    return this.startedAt !== 0;
  }

  /** Requests read and not answered yet. */
  get inFlight(): number {
    return this.unanswered.size;
  }

  /** Open connections, idle or busy. */
  get connections(): number {
    return this.sockets.size;
  }

  /** Call before listen. */
  attach(server: Server): void {
    this.server = server;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    // Before Express sees the request, so that every response of the drain is marked.
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => this.track(res));
  }

  /**
   * Stops the listener, closes idle connections, marks unanswered responses `Connection: close`,
   * and resolves once every connection has closed, or at `deadlineMs`, destroying what is left.
   */
  async drain(deadlineMs: number): Promise<DrainFigures> {
    const server = this.server;
    if (this.draining || !server) throw new Error('HttpDrain: not attached, or already draining');
    this.startedAt = Date.now();
    for (const res of this.unanswered) if (!res.headersSent) res.setHeader('connection', 'close');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    this.endStreams();
    const sweep = setInterval(() => {
      server.closeIdleConnections();
      this.endStreams();
    }, IDLE_SWEEP_MS);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), deadlineMs)));
    let abandoned = 0;
    try {
      if ((await Promise.race([closed, late])) === 'late') {
        abandoned = this.unanswered.size;
        server.closeAllConnections();
        await closed;
      }
    } finally {
      clearInterval(sweep);
      clearTimeout(timer);
    }
    return {
      answered: this.answered,
      abandoned,
      durationMs: Date.now() - this.startedAt,
    };
  }

  /** An event stream never finishes by itself: it ends at once, and its client resumes elsewhere. */
  private endStreams(): void {
    for (const res of this.unanswered) {
      if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) res.end();
    }
  }

  private track(res: ServerResponse): void {
    if (this.draining) res.setHeader('connection', 'close');
    this.unanswered.add(res);
    // One listener per request (this runs for every request): 'close' follows 'finish' when answered.
    res.once('close', () => {
      this.unanswered.delete(res);
      if (this.draining && res.writableFinished) this.answered += 1;
      // A response that went out with keep-alive before the drain leaves an idle connection behind.
      if (this.draining) setImmediate(() => this.server?.closeIdleConnections());
    });
  }
}
