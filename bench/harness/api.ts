import http from 'node:http';
import { BENCH_INTERNAL_API_TOKEN } from './service-env';
import { SETTLE_MS, type LoadRun, type Tally } from './slices';

/** A keep-alive JSON client of the service's admin, internal and public APIs. */
export class ApiClient {
  private readonly agent: http.Agent;

  constructor(
    readonly baseUrl: string,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  request(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: string }> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (text !== undefined) Object.assign(headers, { 'content-type': 'application/json' });
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.baseUrl}${path}`, { method, agent: this.agent, headers });
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      req.end(text);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface BenchVerification {
  id: string;
  account: number;
  /** The account's webhook secret, also its public API credential. */
  secret: string;
  status: 'pending' | 'processing';
  version: number;
}

/**
 * `accounts` accounts through the admin API (account i with the webhook URL `webhookUrlFor(i)`), then
 * `count` verifications round robin over them through the internal API, 16 at a time.
 */
export async function createBenchData(
  client: ApiClient,
  tokens: { admin: string; internal: string },
  accounts: number,
  count: number,
  webhookUrlFor: (account: number) => string,
): Promise<{ secrets: string[]; verifications: BenchVerification[] }> {
  const secrets: string[] = [];
  const accountIds: string[] = [];
  for (let i = 0; i < accounts; i++) {
    const res = await client.request('POST', '/api/v1/admin/accounts', tokens.admin, {
      name: `Bench ${i}`,
      webhook_url: webhookUrlFor(i),
    });
    if (res.status !== 201) throw new Error(`creating an account: HTTP ${res.status} ${res.body}`);
    const account = JSON.parse(res.body) as { id: string; webhook_secret: string };
    accountIds.push(account.id);
    secrets.push(account.webhook_secret);
  }
  const verifications = new Array<BenchVerification>(count);
  let next = 0;
  const creator = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) {
      const res = await client.request('POST', '/api/v1/internal/kyc/verifications', tokens.internal, {
        account_id: accountIds[i % accounts],
        external_user_id: `bench-user-${i}`,
        applicant: {
          first_name: 'Ada',
          last_name: 'Lovelace',
          date_of_birth: '1990-12-10',
          email: `ada${i}@example.com`,
        },
        metadata: { plan: 'gold', source: 'bench' },
      });
      if (res.status !== 201) throw new Error(`creating a verification: HTTP ${res.status} ${res.body}`);
      const { id, version } = JSON.parse(res.body) as { id: string; version: number };
      verifications[i] = {
        id,
        account: i % accounts,
        secret: secrets[i % accounts] as string,
        status: 'pending',
        version,
      };
    }
  };
  await Promise.all(Array.from({ length: 16 }, creator));
  return { secrets, verifications };
}

/**
 * One status change that can repeat for ever, pending ↔ processing (a retake, a new submission),
 * with `expected_version`: one history row and one outbox event, so one webhook, per change. A
 * refused or lost change resynchronises the verification from the public API of `service`.
 */
export async function change(target: ApiClient, service: ApiClient, token: string, v: BenchVerification) {
  const next = v.status === 'pending' ? 'processing' : 'pending';
  const res = await target
    .request('POST', `/api/v1/internal/kyc/verifications/${v.id}/transitions`, token, {
      status: next,
      expected_version: v.version,
    })
    .catch((error: Error) => ({ status: 0, body: error.message }));
  if (res.status === 200) {
    v.status = next;
    v.version++;
    return { ok: true, at: Date.now(), body: res.body };
  }
  const now = await service.request('GET', `/api/v1/public/kyc/verifications/${v.id}`, v.secret).catch(() => null);
  if (now?.status === 200) Object.assign(v, JSON.parse(now.body) as Pick<BenchVerification, 'status' | 'version'>);
  return { ok: false, at: Date.now(), body: res.body };
}

/**
 * Closed-loop changes against one target: `connections` clients, client c moving in turn the
 * verifications i with i % connections == c, one request at a time, so no two requests touch one
 * row, and a client stops only after its last answer. Counted after SETTLE_MS; `committed` counts all.
 */
export function changeLoop(
  target: ApiClient,
  service: ApiClient,
  token: string,
  all: BenchVerification[],
  connections: number,
) {
  const owned = Array.from({ length: connections }, (_, c) => all.filter((_v, i) => i % connections === c));
  const turn = new Array<number>(connections).fill(0);
  const loop = { committed: 0, run: undefined as unknown as LoadRun };
  loop.run = async (seconds: number, tally: Tally): Promise<number> => {
    const startedAt = performance.now();
    const settle = setTimeout(() => tally.markCpu(), SETTLE_MS);
    let counted = 0;
    const client = async (own: BenchVerification[], c: number): Promise<void> => {
      while (performance.now() < startedAt + seconds * 1000) {
        const sent = performance.now();
        const result = await change(target, service, token, own[turn[c]++ % own.length] as BenchVerification);
        if (result.ok) loop.committed++;
        if (sent - startedAt < SETTLE_MS) continue;
        counted++;
        if (!result.ok) tally.failures++;
        tally.latencies.push(performance.now() - sent);
      }
    };
    await Promise.all(owned.map(client));
    clearTimeout(settle);
    tally.addCpu();
    const measuredSeconds = (performance.now() - startedAt - SETTLE_MS) / 1000;
    tally.requests += counted;
    tally.seconds += measuredSeconds;
    return counted / measuredSeconds;
  };
  return loop;
}

/** Changes open loop at `rate`/s: change i leaves at start + i/rate, waiting only for its own verification's previous one. */
export async function pacedChanges(api: ApiClient, verifications: BenchVerification[], rate: number, total: number) {
  const responded = new Map<string, number>();
  const busy = new Map<string, Promise<void>>();
  let [ok, errors] = [0, 0];
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const v = verifications[i % verifications.length] as BenchVerification;
    const run = (busy.get(v.id) ?? Promise.resolve()).then(async () => {
      const result = await change(api, api, BENCH_INTERNAL_API_TOKEN, v);
      if (result.ok) responded.set(`${v.id}:${v.version}`, result.at);
      [ok, errors] = result.ok ? [ok + 1, errors] : [ok, errors + 1];
    });
    busy.set(v.id, run);
  }
  await Promise.all(busy.values());
  return { ok, errors, responded, seconds: (performance.now() - start) / 1000 };
}
