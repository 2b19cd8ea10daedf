import { IncomingHttpHeaders, Server, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One webhook as it arrived: the body is kept raw and parsed after the measured window. */
export interface Arrival {
  /** The account index from the path /hook/<index> (-1 for the floors' /floor path). */
  account: number;
  webhookId: string;
  /** Date.now() when the body had fully arrived, the same clock as the service's updated_at. */
  at: number;
  body: string;
  /** Kept for every `sampleEvery`-th arrival only, for signature checks. */
  headers?: IncomingHttpHeaders;
}

/**
 * The benchmark's webhook endpoint: node:http on 127.0.0.1, answers 200 as soon as the body is in,
 * records the arrival time per webhook-id. Nothing heavier than a push happens per request, so the
 * receiver is not what the figures measure.
 */
export class BenchReceiver {
  private arrivals: Arrival[] = [];
  private readonly seen = new Set<string>();
  private duplicates = 0;
  private readonly sockets = new Set<Socket>();
  private server?: Server;
  private counter = 0;
  port = 0;

  constructor(private readonly sampleEvery = 100) {}

  urlFor(account: number): string {
    return `http://127.0.0.1:${this.port}/hook/${account}`;
  }

  get floorUrl(): string {
    return `http://127.0.0.1:${this.port}/floor`;
  }

  /** Distinct webhook-ids received since the last take(). */
  get count(): number {
    return this.arrivals.length;
  }

  /** Hands over what arrived since the last take() and starts a new window. */
  take(): { arrivals: Arrival[]; duplicates: number } {
    const taken = { arrivals: this.arrivals, duplicates: this.duplicates };
    this.arrivals = [];
    this.duplicates = 0;
    return taken;
  }

  /** Resolves once `count` distinct webhooks arrived in this window; false after `timeoutMs`. */
  async waitForCount(count: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.arrivals.length < count) {
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return true;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const at = Date.now();
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
        res.end('ok');
        const webhookId = String(req.headers['webhook-id']);
        if (this.seen.has(webhookId)) {
          this.duplicates++;
          return;
        }
        this.seen.add(webhookId);
        const match = /^\/hook\/(\d+)$/.exec(req.url ?? '');
        const sampled = this.counter++ % this.sampleEvery === 0;
        this.arrivals.push({
          account: match ? Number(match[1]) : -1,
          webhookId,
          at,
          body: Buffer.concat(chunks).toString('utf8'),
          ...(sampled ? { headers: req.headers } : {}),
        });
      });
    });
    server.keepAliveTimeout = 120_000;
    server.headersTimeout = 130_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server = server;
    await new Promise<void>((resolve) =>
      server.listen(0, '127.0.0.1', 1024, () => {
        this.port = (server.address() as AddressInfo).port;
        resolve();
      }),
    );
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Waits for `expected` distinct webhooks of this window (180 s at most), then hands them over. */
export async function collect(receiver: BenchReceiver, expected: number, what: string, log: (line: string) => void) {
  if (!(await receiver.waitForCount(expected, 180_000)))
    log(`WARNING: ${what}: only ${receiver.count} of ${expected} webhooks arrived within 180 s`);
  // Late duplicates (at-least-once) of this window would otherwise land in the next one.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const { arrivals, duplicates } = receiver.take();
  return { arrivals, missing: Math.max(0, expected - arrivals.length), duplicates };
}

/**
 * Checks the sampled arrivals' signatures with standardwebhooks' own verify (the reference, not the
 * service's signer). Returns [checked, failed].
 */
export function verifySample(arrivals: Arrival[], secretFor: (arrival: Arrival) => string): [number, number] {
  let checked = 0;
  let failed = 0;
  for (const arrival of arrivals) {
    if (!arrival.headers) continue;
    checked++;
    try {
      new Webhook(secretFor(arrival)).verify(arrival.body, {
        'webhook-id': String(arrival.headers['webhook-id']),
        'webhook-timestamp': String(arrival.headers['webhook-timestamp']),
        'webhook-signature': String(arrival.headers['webhook-signature']),
      });
    } catch {
      failed++;
    }
  }
  return [checked, failed];
}
