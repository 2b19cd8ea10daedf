import { IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Lab } from '../harness/processes';
import { log } from '../harness/report';

/** One webhook as it arrived: the body is kept raw and parsed after the measured window. */
export interface Arrival {
  /** The account index from the path /hook/<index>. */
  account: number;
  /** Date.now() when the body had fully arrived, the same clock as the service's updated_at. */
  at: number;
  body: string;
  /** Kept for every 100th arrival only, for the signature check. */
  headers?: IncomingHttpHeaders;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The benchmark's webhook endpoint: node:http on 127.0.0.1, answers 200 as soon as the body is in,
 * records the arrival time per webhook-id (a redelivered id counts once). Nothing heavier than a
 * push happens per request, so the receiver is not what the figures measure.
 */
export class BenchReceiver {
  private arrivals: Arrival[] = [];
  private readonly seen = new Set<string>();
  private readonly server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
      const webhookId = String(req.headers['webhook-id']);
      if (this.seen.has(webhookId)) return;
      this.seen.add(webhookId);
      const account = Number(/^\/hook\/(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
      const body = Buffer.concat(chunks).toString('utf8');
      this.arrivals.push({ account, at, body, headers: this.seen.size % 100 === 1 ? req.headers : undefined });
    });
  });

  /** A receiver listening, closed at the end of the run. */
  static async open(lab: Lab): Promise<BenchReceiver> {
    const receiver = new BenchReceiver();
    Object.assign(receiver.server, { keepAliveTimeout: 120_000, headersTimeout: 130_000 });
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', 1024, resolve));
    lab.defer(() => new Promise((closed) => receiver.server.close(closed).closeAllConnections()));
    return receiver;
  }

  /** How many webhooks arrived since the last collect. */
  get count(): number {
    return this.arrivals.length;
  }

  /** Account i's webhook URL. */
  readonly urlFor = (account: number): string =>
    `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook/${account}`;

  /**
   * Waits for `expected` distinct webhooks that `match` (every one unless given; 180 s at most),
   * then hands over everything that arrived and starts a new window.
   */
  async collect(expected: number, what: string, match: (arrival: Arrival) => boolean = () => true) {
    const deadline = Date.now() + 180_000;
    let [seen, matched] = [0, 0];
    const count = (): number => {
      for (; seen < this.arrivals.length; seen++) if (match(this.arrivals[seen] as Arrival)) matched++;
      return matched;
    };
    while (count() < expected && Date.now() < deadline) await sleep(20);
    if (matched < expected) log(`WARNING: ${what}: only ${matched} of ${expected} webhooks arrived within 180 s`);
    // Stragglers of this window would otherwise land in the next one.
    await sleep(200);
    const arrivals = this.arrivals;
    this.arrivals = [];
    return { arrivals, missing: Math.max(0, expected - matched) };
  }
}

/**
 * Checks the sampled arrivals' signatures with standardwebhooks' own verify (the reference, not the
 * service's signer), account i's with secrets[i]. Returns [checked, failed].
 */
export function verifySample(arrivals: Arrival[], secrets: string[]): [number, number] {
  const sampled = arrivals.filter((arrival) => arrival.headers);
  const failed = sampled.filter((arrival) => {
    try {
      new Webhook(secrets[arrival.account] ?? '').verify(arrival.body, arrival.headers as Record<string, string>);
      return false;
    } catch {
      return true;
    }
  });
  return [sampled.length, failed.length];
}
