import http from 'node:http';
import { BENCH_ADMIN_TOKEN, BENCH_INTERNAL_API_TOKEN } from './service-env';

/** A keep-alive JSON client of the service's admin, internal and public APIs (and of the floors). */
export class ApiClient {
  private readonly agent: http.Agent;

  constructor(
    readonly baseUrl: string,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  /** Resolves with the answer whatever its status; rejects on a network error or after 30 s. */
  request(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: string }> {
    const headers = {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    };
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
      req.end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** work(0) … work(count - 1), `width` at a time. */
export async function concurrently(count: number, work: (i: number) => Promise<void>, width = 16): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await work(i);
  };
  await Promise.all(Array.from({ length: width }, worker));
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
  accounts: number,
  count: number,
  webhookUrlFor: (account: number) => string,
): Promise<{ secrets: string[]; verifications: BenchVerification[] }> {
  type Created = { id: string; version: number; webhook_secret: string };
  const created = async (path: string, token: string, body: unknown): Promise<Created> => {
    const res = await client.request('POST', path, token, body);
    if (res.status !== 201) throw new Error(`POST ${path}: HTTP ${res.status} ${res.body}`);
    return JSON.parse(res.body) as Created;
  };
  const [ids, secrets]: string[][] = [[], []];
  for (let i = 0; i < accounts; i++) {
    const body = { name: `Bench ${i}`, webhook_url: webhookUrlFor(i) };
    const account = await created('/api/v1/admin/accounts', BENCH_ADMIN_TOKEN, body);
    ids.push(account.id);
    secrets.push(account.webhook_secret);
  }
  const verifications = new Array<BenchVerification>(count);
  await concurrently(count, async (i) => {
    const account = i % accounts;
    const { id, version } = await created('/api/v1/internal/kyc/verifications', BENCH_INTERNAL_API_TOKEN, {
      account_id: ids[account],
      external_user_id: `bench-user-${i}`,
      applicant: {
        first_name: 'Ada',
        last_name: 'Lovelace',
        date_of_birth: '1990-12-10',
        email: `ada${i}@example.com`,
      },
      metadata: { plan: 'gold', source: 'bench' },
    });
    verifications[i] = { id, version, account, secret: secrets[account] as string, status: 'pending' };
  });
  return { secrets, verifications };
}

/**
 * One status change that can repeat for ever, pending ↔ processing (a retake, a new submission),
 * with `expected_version`: one history row and one outbox event, so one webhook, per change. A
 * refused or lost change resynchronises the verification from the public API of `service`.
 */
export async function change(target: ApiClient, service: ApiClient, v: BenchVerification) {
  const next = v.status === 'pending' ? 'processing' : 'pending';
  const path = `/api/v1/internal/kyc/verifications/${v.id}/transitions`;
  const body = { status: next, expected_version: v.version };
  const res = await target.request('POST', path, BENCH_INTERNAL_API_TOKEN, body).catch(() => null);
  if (res?.status === 200) {
    [v.status, v.version] = [next, v.version + 1];
    return { ok: true, at: Date.now(), body: res.body };
  }
  const now = await service.request('GET', `/api/v1/public/kyc/verifications/${v.id}`, v.secret).catch(() => null);
  if (now?.status === 200) Object.assign(v, JSON.parse(now.body) as Pick<BenchVerification, 'status' | 'version'>);
  return { ok: false, at: Date.now(), body: `HTTP ${res?.status} ${res?.body}` };
}
