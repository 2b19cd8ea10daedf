import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  webhookId: string;
  /** What `Webhook.verify` returned: the parsed body, trusted only because the signature checked out. */
  event: {
    type: string;
    data: {
      previous_status: string | null;
      verification: { id: string; status: string; version: number; rejection_reasons: string[] };
    };
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The client's side of the demo: a webhook endpoint on 127.0.0.1 that verifies every signature, as the client guide shows. */
export class DemoReceiver {
  private server?: Server;
  private secret?: string;
  private readonly received: ReceivedWebhook[] = [];
  private readonly waiters: ((webhook: ReceivedWebhook) => void)[] = [];
  /** Deliveries refused because the signature did not verify (always 0 unless something is wrong). */
  rejected = 0;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      readBody(req).then(
        (body) => {
          try {
            if (!this.secret) throw new Error('no secret yet');
            const headers = Object.fromEntries(
              Object.entries(req.headers).map(([name, value]) => [name, String(value)]),
            );
            const event = new Webhook(this.secret).verify(body, headers) as ReceivedWebhook['event'];
            res.writeHead(204).end();
            this.push({ webhookId: headers['webhook-id'], event });
          } catch {
            this.rejected++;
            res.writeHead(400).end();
          }
        },
        () => res.writeHead(400).end(),
      );
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/kyc-hook`;
  }

  /** The account's webhook secret, as the admin API returned it. */
  useSecret(secret: string): void {
    this.secret = secret;
  }

  /** The next verified webhook, in arrival order. */
  next(timeoutMs: number): Promise<ReceivedWebhook> {
    const ready = this.received.shift();
    if (ready) return Promise.resolve(ready);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(
          new Error(`no webhook arrived within ${timeoutMs / 1000} s (is the delivery worker able to reach Redis?)`),
        );
      }, timeoutMs);
      const waiter = (webhook: ReceivedWebhook): void => {
        clearTimeout(timer);
        resolve(webhook);
      };
      this.waiters.push(waiter);
    });
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private push(webhook: ReceivedWebhook): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(webhook);
    else this.received.push(webhook);
  }
}
