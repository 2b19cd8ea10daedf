import { IncomingMessage, Server, ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { FAST_DELIVERY, figures, pool, report, runDb, sleep, tokens, waitForDeliveries } from '../faults/harness';
import type { CountingReceiver } from '../faults/harness';
import { TestApp, startApp } from '../helpers/test-app';
import { RedisClusterUnderTest } from './redis-cluster';

const ACCOUNTS = 20;
const VERIFICATIONS = 1_000; // two status changes each: 2,000 events
const MAX_IN_FLIGHT = 3;
const REQUEST_TIMEOUT_MS = 10_000;

/** Events the sweepers relayed (enqueues that failed during the failover), from the workers' log lines. */
function relayed(worker: TestApp): number {
  return worker.output
    .join('')
    .split('\n')
    .reduce((sum, line) => sum + Number(/relayed (\d+) webhook event/.exec(line)?.[1] ?? 0), 0);
}

/** Verifies every signature, counts 2xx per webhook-id and the most concurrent requests per account. */
class ClusterReceiver {
  readonly delivered = new Map<string, number>();
  readonly inFlight = new Map<number, number>();
  maxInFlight = 0;
  badSignatures = 0;
  readonly secrets: string[] = [];
  private server?: Server;
  port = 0;

  urlOf(account: number): string {
    return `http://127.0.0.1:${this.port}/hook/${account}`;
  }

  get duplicates(): number {
    let extra = 0;
    for (const count of this.delivered.values()) extra += count - 1;
    return extra;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const account = Number(/\/hook\/(\d+)/.exec(req.url ?? '')?.[1] ?? -1);
    const now = (this.inFlight.get(account) ?? 0) + 1;
    this.inFlight.set(account, now);
    this.maxInFlight = Math.max(this.maxInFlight, now);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      try {
        new Webhook(this.secrets[account]).verify(Buffer.concat(chunks).toString(), {
          'webhook-id': id,
          'webhook-timestamp': String(req.headers['webhook-timestamp']),
          'webhook-signature': String(req.headers['webhook-signature']),
        });
      } catch {
        this.badSignatures += 1;
      }
      // A short delay so that deliveries of one account overlap and the limit is exercised.
      setTimeout(() => {
        this.inFlight.set(account, (this.inFlight.get(account) ?? 1) - 1);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok', () => {
          this.delivered.set(id, (this.delivered.get(id) ?? 0) + 1);
        });
      }, 30);
    });
  }
}

/** Counts every answer by kind; a time-out is a failure, never retried away. */
class Api {
  readonly answers = { ok: 0, unavailable: 0, timeouts: 0, other: 0 };

  constructor(private readonly urls: string[]) {}

  async post(i: number, path: string, token: string, body: unknown): Promise<{ status: number; json: unknown }> {
    try {
      const res = await fetch(`${this.urls[i % this.urls.length]}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const json: unknown = await res.json().catch(() => ({}));
      if (res.status >= 200 && res.status < 300) this.answers.ok += 1;
      else if (res.status === 503) this.answers.unavailable += 1;
      else this.answers.other += 1;
      return { status: res.status, json };
    } catch {
      this.answers.timeouts += 1;
      return { status: 0, json: {} };
    }
  }

  /** A careful client: a clean 503 is retried after a pause; 409 after a retry means it had committed. */
  async retrying(i: number, path: string, token: string, body: unknown): Promise<{ status: number; json: unknown }> {
    for (let attempt = 0; ; attempt += 1) {
      const answer = await this.post(i + attempt, path, token, body);
      if (answer.status !== 503 || attempt >= 20)
        return attempt > 0 && answer.status === 409 ? { ...answer, status: 200 } : answer;
      await sleep(500);
    }
  }
}

describe('Redis Cluster: 2 API + 2 worker processes while the queue slot primary fails over', () => {
  const cluster = new RedisClusterUnderTest();
  const receiver = new ClusterReceiver();
  const processes: TestApp[] = [];
  let db: Pool | undefined;

  afterAll(async () => {
    for (const app of processes) await app.kill().catch(() => undefined);
    await receiver.stop();
    await cluster.stop();
    await db?.end();
  });

  it('loses no event, keeps the per-account limit, and answers 2xx or a clean 503', async () => {
    await cluster.start();
    await receiver.start();
    db = runDb();
    const prefix = `{kyc_${Date.now().toString(36)}}`;
    const env = {
      ...FAST_DELIVERY,
      REDIS_CLUSTER_NODES: cluster.nodesVariable,
      QUEUE_PREFIX: prefix,
      WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: String(MAX_IN_FLIGHT),
    };
    processes.push(
      ...(await Promise.all([
        startApp({ ...env, APP_ROLE: 'api' }),
        startApp({ ...env, APP_ROLE: 'api' }),
        startApp({ ...env, APP_ROLE: 'worker', LOG_LEVEL: 'info' }),
        startApp({ ...env, APP_ROLE: 'worker', LOG_LEVEL: 'info' }),
      ])),
    );
    const api = new Api(processes.slice(0, 2).map((app) => app.url));
    const { admin, internal } = tokens();
    const accountIds: string[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const res = await api.retrying(i, '/api/v1/admin/accounts', admin, {
        name: `cluster ${i}`,
        webhook_url: receiver.urlOf(i),
      });
      const body = res.json as { id: string; webhook_secret: string };
      accountIds.push(body.id);
      receiver.secrets[i] = body.webhook_secret;
    }

    let done = 0;
    let killedAt = 0;
    let failoverSeconds = 0;
    let readyDown = 0;
    const queuePrimary = await cluster.primaryOf(prefix);
    const failover = (async () => {
      while (done < (VERIFICATIONS * 2) / 3) await sleep(50);
      killedAt = Date.now();
      await cluster.kill(queuePrimary);
      // The replica is promoted once the others mark the primary failed (node timeout 2 s).
      for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
        await sleep(200);
        const ready = await fetch(`${processes[0].url}/health/ready`, { signal: AbortSignal.timeout(3_000) }).catch(
          () => null,
        );
        if (ready?.status === 503) readyDown += 1;
        const primary = await cluster.primaryOf(prefix).catch(() => queuePrimary);
        if (primary !== queuePrimary && (await cluster.stateOk())) {
          failoverSeconds = (Date.now() - killedAt) / 1000;
          return;
        }
      }
      throw new Error('the cluster did not fail over within 60 s');
    })();

    const statuses = await pool(
      Array.from({ length: VERIFICATIONS }, (_, i) => i),
      8,
      async (i) => {
        const created = await api.retrying(i, '/api/v1/internal/kyc/verifications', internal, {
          account_id: accountIds[i % ACCOUNTS],
          external_user_id: `cluster-${i}`,
        });
        const id = (created.json as { id: string }).id;
        const path = `/api/v1/internal/kyc/verifications/${id}/transitions`;
        const first = await api.retrying(i, path, internal, { status: 'processing' });
        done += 1;
        const second = await api.retrying(i + 1, path, internal, { status: 'approved' });
        done += 1;
        return [created.status, first.status, second.status];
      },
    );
    await failover;
    expect(statuses.flat().filter((status) => status < 200 || status >= 300)).toEqual([]);

    await waitForDeliveries(db, accountIds, VERIFICATIONS * 2, 180_000);
    await sleep(2_000);
    // Readiness reads CLUSTER INFO: ok again once the replica serves the slot.
    expect((await fetch(`${processes[0].url}/health/ready`)).status).toBe(200);
    const result = await figures(db, accountIds, receiver as unknown as CountingReceiver, {
      processes: '2 api + 2 worker',
      cluster: '3 primaries + 3 replicas',
      failover_s: failoverSeconds.toFixed(1),
      sweeper_relays: relayed(processes[2]) + relayed(processes[3]),
      ready_503_polls_during_failover: readyDown,
      api_2xx: api.answers.ok,
      api_503: api.answers.unavailable,
      api_timeouts: api.answers.timeouts,
      api_other: api.answers.other,
      bad_signatures: receiver.badSignatures,
      max_in_flight_per_account: receiver.maxInFlight,
    });
    report('redis-cluster', result);
    expect(result.created).toBe(VERIFICATIONS * 2);
    expect(result.lost).toBe(0);
    expect(receiver.badSignatures).toBe(0);
    expect(api.answers.timeouts).toBe(0);
    expect(api.answers.other).toBe(0);
    expect(receiver.maxInFlight).toBeLessThanOrEqual(MAX_IN_FLIGHT);
    expect(killedAt).toBeGreaterThan(0);
  });
});
