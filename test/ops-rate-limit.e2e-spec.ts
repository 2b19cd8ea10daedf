import { createAccount } from './helpers/factories';
import { OwnRedis, startOwnRedis } from './helpers/ops-infra';
import { TestApp, startApp } from './helpers/test-app';

const LIST = '/api/v1/public/kyc/verifications';

function expectHeaders(res: { headers: Record<string, string> }, limit: number, remaining: number): void {
  expect(res.headers['ratelimit-limit']).toBe(String(limit));
  expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
  const reset = Number(res.headers['ratelimit-reset']);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(60);
}

describe('rate limiting on the public API', () => {
  let redis: OwnRedis;
  let t: TestApp;
  beforeAll(async () => {
    redis = await startOwnRedis();
    t = await startApp({ RATE_LIMIT_PER_MINUTE: '3', REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  it('counts per account, refuses the excess with 429 rate_limited and Retry-After, and leaves other accounts alone', async () => {
    const a = await createAccount(t);
    const b = await createAccount(t);
    const asA = (path: string) => t.http.get(path).set('authorization', `Bearer ${a.secret}`);
    const first = await asA(LIST);
    expect(first.status).toBe(200);
    expectHeaders(first, 3, 2);
    const second = await asA(`${LIST}/0193a6f2-0000-7000-8000-000000000000`);
    expect(second.status).toBe(404);
    expectHeaders(second, 3, 1);
    const third = await asA(`${LIST}?limit=0`);
    expect(third.status).toBe(400);
    expectHeaders(third, 3, 0);
    const refused = await asA(LIST);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'rate_limited', details: [] });
    expect(typeof refused.body.error.request_id).toBe('string');
    expectHeaders(refused, 3, 0);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);

    const other = await t.http.get(LIST).set('authorization', `Bearer ${b.secret}`);
    expect(other.status).toBe(200);
    expectHeaders(other, 3, 2);
  });

  it('leaves the internal and admin APIs unlimited', async () => {
    for (let i = 0; i < 5; i += 1) {
      const res = await t.http
        .post('/api/v1/admin/accounts')
        .set('authorization', `Bearer ${t.adminToken}`)
        .send({ name: `n${i}` });
      expect(res.status).toBe(201);
      expect(res.headers['ratelimit-limit']).toBeUndefined();
    }
  });

  it('counts requests without valid credentials per client address, so 401s carry the headers too', async () => {
    const res = await t.http.get(LIST);
    expect(res.status).toBe(401);
    expect(res.headers['ratelimit-limit']).toBe('3');
    expect(res.headers['ratelimit-remaining']).toBeDefined();
  });

  it('keeps limiting, per process, while Redis is down: requests are served without waiting on Redis, then refused', async () => {
    const c = await createAccount(t);
    await redis.stop();
    // The in-memory fallback counts per clock minute: keep the burst inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
    for (let i = 0; i < 3; i += 1) {
      const started = Date.now();
      const res = await t.http.get(LIST).set('authorization', `Bearer ${c.secret}`);
      expect(res.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(1_500);
      expectHeaders(res, 3, 2 - i);
    }
    const refused = await t.http.get(LIST).set('authorization', `Bearer ${c.secret}`);
    expect(refused.status).toBe(429);
    expectHeaders(refused, 3, 0);
  });
});

describe('rate limiting turned off', () => {
  it('RATE_LIMIT_PER_MINUTE=0 serves everything without RateLimit headers', async () => {
    const t = await startApp({ RATE_LIMIT_PER_MINUTE: '0' });
    try {
      const account = await createAccount(t);
      for (let i = 0; i < 4; i += 1) {
        const res = await t.http.get(LIST).set('authorization', `Bearer ${account.secret}`);
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });
});
