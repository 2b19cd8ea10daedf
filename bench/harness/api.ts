import http from 'node:http';
import { BENCH_ADMIN_TOKEN, BENCH_INTERNAL_API_TOKEN } from './service-env';

/** A keep-alive JSON client of the service's admin, internal and public APIs (and of the floors). */
export type ApiClient = ReturnType<typeof apiClient>;
export function apiClient(baseUrl: string, maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  /** Resolves with the answer whatever its status; rejects on a network error or after 30 s. */
  const request = (method: string, path: string, token: string, body?: unknown) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const type = body === undefined ? {} : { 'content-type': 'application/json' };
      const req = http.request(`${baseUrl}${path}`, {
        method,
        agent,
        headers: { authorization: `Bearer ${token}`, ...type },
      });
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
  return { request, close: () => agent.destroy() };
}

/** work(0) … work(count - 1), `width` at a time. */
export async function concurrently(count: number, work: (i: number) => Promise<void>, width = 16): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await work(i);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

/** A verification the bench moves; `secret` is its account's webhook secret, also its public API credential. */
export type BenchVerification = { id: string; account: number; secret: string; status: Status; version: number };
type Status = 'pending' | 'processing';

/**
 * `accounts` accounts through the admin API (account i with the webhook URL `urlFor(i)`), then
 * `count` verifications round robin over them through the internal API, 16 at a time.
 */
export async function createBenchData(api: ApiClient, accounts: number, count: number, urlFor: (i: number) => string) {
  type Created = { id: string; version: number; webhook_secret: string };
  const created = async (path: string, token: string, body: unknown): Promise<Created> => {
    const res = await api.request('POST', path, token, body);
    if (res.status !== 201) throw new Error(`POST ${path}: HTTP ${res.status} ${res.body}`);
    return JSON.parse(res.body) as Created;
  };
  const made: Created[] = [];
  for (let i = 0; i < accounts; i++) {
    const body = { name: `Bench ${i}`, webhook_url: urlFor(i) };
    made.push(await created('/api/v1/admin/accounts', BENCH_ADMIN_TOKEN, body));
  }
  const [ids, secrets] = [made.map((a) => a.id), made.map((a) => a.webhook_secret)];
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
