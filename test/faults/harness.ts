import { appendFileSync } from 'node:fs';
import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import { AddressInfo, Socket, connect as tcpConnect, createServer as createTcpServer } from 'node:net';
import Redis from 'ioredis';
import { Pool } from 'pg';
import { freePort } from '../helpers/test-app';

/** Short schedules so a fault scenario runs in seconds; each spec may override. */
export const FAST_DELIVERY = {
  WEBHOOK_RETRY_SCHEDULE: '300ms,600ms,1s,2s,3s',
  OUTBOX_SWEEP_INTERVAL_MS: '500',
  WEBHOOK_TIMEOUT_MS: '5000',
  RATE_LIMIT_PER_MINUTE: '0',
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: string,
  everyMs = 250,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** Runs `work` over `items` with at most `concurrency` in flight. */
export async function pool<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
  return results;
}

export interface Reply {
  status: number;
  delayMs: number;
}

/**
 * A webhook endpoint on 127.0.0.1 that counts arrivals per webhook-id (only answered 2xx count as
 * received), and can go down and come back on the same port.
 */
export class CountingReceiver {
  /** webhook-id → deliveries answered 2xx. */
  readonly delivered = new Map<string, number>();
  /** webhook-id → when each 2xx answer went out. */
  readonly answeredAt = new Map<string, number[]>();
  requests = 0;
  /** Requests received and not answered yet. */
  inFlight = 0;
  reply: Reply = { status: 200, delayMs: 0 };
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Webhook ids answered 2xx more than once. */
  duplicatedIds(): string[] {
    return [...this.delivered.entries()].filter(([, count]) => count > 1).map(([id]) => id);
  }

  /** Milliseconds between the first and the second 2xx of each duplicated id, sorted. */
  duplicateGaps(): number[] {
    return this.duplicatedIds()
      .map((id) => {
        const [first, second] = this.answeredAt.get(id) ?? [0, 0];
        return second - first;
      })
      .sort((a, b) => a - b);
  }

  get duplicates(): number {
    let extra = 0;
    for (const count of this.delivered.values()) extra += count - 1;
    return extra;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    // Below the ephemeral range: while the receiver is down, a delivery's connection could otherwise
    // be given the closed port as its own source port and connect to itself (then wait out its time-out).
    if (this.port === 0) this.port = await freePort();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Port closed and every open connection dropped: deliveries fail with connection errors. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    req.resume();
    req.on('end', () => {
      this.requests += 1;
      this.inFlight += 1;
      const id = String(req.headers['webhook-id']);
      const { status, delayMs } = this.reply;
      const answer = (): void => {
        this.inFlight -= 1;
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end('ok', () => {
          if (status < 200 || status >= 300) return;
          this.delivered.set(id, (this.delivered.get(id) ?? 0) + 1);
          this.answeredAt.set(id, [...(this.answeredAt.get(id) ?? []), Date.now()]);
        });
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  }
}

/** A thin fetch client for the routes the scenarios drive. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly tokens: { admin: string; internal: string },
  ) {}

  async call(
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      parsed = { raw: text };
    }
    return { status: res.status, body: parsed };
  }

  async createAccount(name: string, webhookUrl: string): Promise<{ id: string; secret: string }> {
    const res = await this.call('POST', '/api/v1/admin/accounts', this.tokens.admin, { name, webhook_url: webhookUrl });
    if (res.status !== 201) throw new Error(`createAccount: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: String(res.body.id), secret: String(res.body.webhook_secret) };
  }

  async createVerification(accountId: string, externalUserId: string): Promise<string> {
    const res = await this.tryCreateVerification(accountId, externalUserId);
    if (res.status !== 201) throw new Error(`createVerification: ${res.status} ${JSON.stringify(res.body)}`);
    return String(res.body.id);
  }

  /** The create's answer, whatever it is (callers decide what is acceptable). */
  tryCreateVerification(
    accountId: string,
    externalUserId: string,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    return this.call('POST', '/api/v1/internal/kyc/verifications', this.tokens.internal, {
      account_id: accountId,
      external_user_id: externalUserId,
    });
  }

  /** The HTTP status of the transition (callers decide what is acceptable). */
  async transition(verificationId: string, status: 'processing' | 'approved'): Promise<number> {
    const res = await this.call(
      'POST',
      `/api/v1/internal/kyc/verifications/${verificationId}/transitions`,
      this.tokens.internal,
      { status },
    );
    return res.status;
  }
}

/** Retries 503s the way a careful client would; counts them in `retried`. */
export class RetryingTransitions {
  retried = 0;

  constructor(private readonly clients: ApiClient[]) {}

  /**
   * The new verification's id. A 503 (a pool connection not ready within 1 s on an overloaded machine)
   * committed nothing, unless it says the commit is unknown: the create is sent again, to the next
   * process, except then (a second create could duplicate the first; the run fails instead).
   */
  async create(accountId: string, externalUserId: string, clientIndex = 0): Promise<string> {
    for (let attempt = 0; ; attempt += 1) {
      const client = this.clients[(clientIndex + attempt) % this.clients.length];
      const res = await client.tryCreateVerification(accountId, externalUserId);
      if (res.status === 201) return String(res.body.id);
      const commitUnknown = JSON.stringify(res.body).includes('"field":"commit"');
      if (res.status !== 503 || commitUnknown || attempt >= 10) {
        throw new Error(`createVerification: ${res.status} ${JSON.stringify(res.body)}`);
      }
      this.retried += 1;
      await sleep(500);
    }
  }

  /** 200, or 409 when a retried change turns out to have committed before its 503. */
  async run(verificationId: string, status: 'processing' | 'approved', clientIndex = 0): Promise<number> {
    for (let attempt = 0; ; attempt += 1) {
      const answer = await this.clients[(clientIndex + attempt) % this.clients.length].transition(
        verificationId,
        status,
      );
      if (answer !== 503 || attempt >= 10) return attempt > 0 && answer === 409 ? 200 : answer;
      this.retried += 1;
      await sleep(500);
    }
  }
}

export function tokens(): { admin: string; internal: string } {
  return { admin: process.env.ADMIN_TOKEN as string, internal: process.env.INTERNAL_API_TOKEN as string };
}

export function runDb(): Pool {
  // One connection, never closed while idle: once made it keeps its place however many connections the
  // services under test take (four processes can reach PostgreSQL's default max_connections of 100).
  return new Pool({ connectionString: process.env.DATABASE_URL, max: 1, idleTimeoutMillis: 0 });
}

export interface DeliveryCounts {
  events: number;
  delivered: number;
  pending: number;
  failed: number;
}

export async function deliveryCounts(db: Pool, accountIds: string[]): Promise<DeliveryCounts> {
  const res = await db.query<{ delivery_status: string; count: number }>(
    `SELECT delivery_status, count(*)::int AS count FROM webhook_events WHERE account_id = ANY($1::uuid[]) GROUP BY 1`,
    [accountIds],
  );
  const by = Object.fromEntries(res.rows.map((row) => [row.delivery_status, row.count])) as Record<string, number>;
  const delivered = by.delivered ?? 0;
  const pending = by.pending ?? 0;
  const failed = by.failed ?? 0;
  return { events: delivered + pending + failed, delivered, pending, failed };
}

export async function eventIds(db: Pool, accountIds: string[]): Promise<string[]> {
  const res = await db.query<{ id: string }>('SELECT id FROM webhook_events WHERE account_id = ANY($1::uuid[])', [
    accountIds,
  ]);
  return res.rows.map((row) => row.id);
}

export interface Figures {
  created: number;
  delivered: number;
  lost: number;
  duplicated: number;
  [extra: string]: number | string;
}

/** Created = outbox events in the database; lost = created but never answered 2xx at the receiver. */
export async function figures(
  db: Pool,
  accountIds: string[],
  receiver: CountingReceiver,
  extra: Record<string, number | string> = {},
): Promise<Figures> {
  const ids = await eventIds(db, accountIds);
  const lost = ids.filter((id) => !receiver.delivered.has(id)).length;
  return { created: ids.length, delivered: ids.length - lost, lost, duplicated: receiver.duplicates, ...extra };
}

/** One greppable line per scenario (also appended to FAULT_FIGURES_FILE when set). */
export function report(scenario: string, result: Record<string, number | string>): void {
  const line = `FIGURES ${scenario}: ${Object.entries(result)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ')}\n`;
  process.stdout.write(line);
  if (process.env.FAULT_FIGURES_FILE) appendFileSync(process.env.FAULT_FIGURES_FILE, line);
}

export async function waitForDeliveries(
  db: Pool,
  accountIds: string[],
  expected: number,
  timeoutMs: number,
): Promise<void> {
  await waitUntil(
    async () => {
      const counts = await deliveryCounts(db, accountIds);
      return counts.events >= expected && counts.pending === 0;
    },
    timeoutMs,
    `${expected} events to leave pending`,
    500,
  );
}

/**
 * Event ids of the delivery jobs Bull moved back to waiting as stalled (lock lost: a worker died,
 * or was starved of CPU past the lock duration), from the queue's own pub/sub channel.
 */
export interface StalledWatch {
  ids: Set<string>;
  close(): Promise<void>;
}

export async function watchStalled(prefix: string, redisUrl = process.env.REDIS_URL as string): Promise<StalledWatch> {
  const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const ids = new Set<string>();
  subscriber.on('message', (_channel: string, jobId: string) => ids.add(jobId.split(':')[0]));
  subscriber.on('error', () => undefined);
  await subscriber.subscribe(`${prefix}:webhook-deliveries:stalled@`);
  return {
    ids,
    close: async () => {
      subscriber.disconnect();
    },
  };
}

/**
 * A TCP forwarder that can go silent like a network partition: while paused, bytes in both
 * directions are held (no RST, no FIN) and new connections are accepted but never answered.
 * `silence` does that to the open connections whose first bytes from the client match, alone (a
 * PostgreSQL startup message names its application_name there).
 */
export async function startPausableProxy(
  targetPort: number,
  targetHost = '127.0.0.1',
): Promise<{
  port: number;
  pause(): void;
  resume(): void;
  silence(firstBytesMatch: (first: Buffer) => boolean): number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let paused = false;
  const pairs: Array<{ client: Socket; upstream: Socket | null; first?: Buffer }> = [];
  const link = (pair: (typeof pairs)[number]): void => {
    const upstream = tcpConnect(targetPort, targetHost);
    pair.upstream = upstream;
    sockets.add(upstream);
    pair.client.pipe(upstream).pipe(pair.client);
    upstream.on('error', () => pair.client.destroy());
  };
  const server = createTcpServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    client.on('close', () => pair.upstream?.destroy());
    const pair: (typeof pairs)[number] = { client, upstream: null };
    client.once('data', (chunk: Buffer) => (pair.first = chunk));
    pairs.push(pair);
    if (!paused) link(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    pause: () => {
      paused = true;
      for (const pair of pairs) {
        pair.client.pause();
        pair.upstream?.pause();
      }
    },
    silence: (firstBytesMatch) => {
      const silenced = pairs.filter((pair) => !pair.client.destroyed && pair.first && firstBytesMatch(pair.first));
      for (const pair of silenced) {
        pair.client.pause();
        pair.upstream?.pause();
      }
      return silenced.length;
    },
    resume: () => {
      paused = false;
      for (const pair of pairs) {
        if (pair.upstream) {
          pair.client.resume();
          pair.upstream.resume();
        } else if (!pair.client.destroyed) link(pair);
      }
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
