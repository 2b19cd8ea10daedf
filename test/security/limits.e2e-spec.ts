import { request as httpRequest } from 'node:http';
import Redis from 'ioredis';
import type { Response } from 'supertest';
import { expectError } from '../helpers/expect-error';
import { createAccount } from '../helpers/factories';
import { waitFor } from '../helpers/poll';
import { RedisServer } from '../helpers/redis-server';
import { TestApp, startApp } from '../helpers/test-app';

// Issue 14, items 4-6: the public limit while Redis is down, failed credentials on the admin and
// internal APIs and the dashboard, and test events.

const LIST = '/api/v1/public/kyc/verifications';
const ACCOUNTS = '/api/v1/admin/accounts';
const SOME_ACCOUNT = `${ACCOUNTS}/0193a6f2-0000-7000-8000-000000000000`;
const INTERNAL = '/api/v1/internal/kyc/verifications';
const TEST_EVENT = '/api/v1/public/kyc/webhook-events/test';
const DASHBOARD = '/admin/queues/api/queues';

/** The in-memory fallback counts per clock minute: start a burst well inside one, so it cannot straddle two. */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
}

function expectRetryAfter(res: Response): void {
  const seconds = Number(res.headers['retry-after']);
  expect(Number.isInteger(seconds)).toBe(true);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(60);
}

function expectLimitHeaders(res: Response, limit: number, remaining: number): void {
  expect(res.headers['ratelimit-limit']).toBe(String(limit));
  expect(res.headers['ratelimit-remaining']).toBe(String(remaining));
  expect(Number(res.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
  expect(Number(res.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
}

function basic(password: string): string {
  return `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`;
}

/** One request from another loopback address (supertest cannot choose its source address). */
function rawRequest(
  t: TestApp,
  path: string,
  headers: Record<string, string>,
  localAddress: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${t.url}${path}`, { method: 'GET', headers, localAddress }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the public rate limit while Redis is down', () => {
  let redis: RedisServer;
  let t: TestApp;
  beforeAll(async () => {
    redis = await RedisServer.reserve();
    await redis.start();
    t = await startApp({ RATE_LIMIT_PER_MINUTE: '5', REDIS_URL: redis.url });
  });
  afterAll(async () => {
    await t.close();
    await redis.stop();
  });

  it('still holds per process, with truthful headers, and counts in Redis again once it is back', async () => {
    const a = await createAccount(t);
    const c = await createAccount(t);
    await redis.stop();
    await awayFromMinuteEdge();

    for (let i = 1; i <= 5; i += 1) {
      const res = await t.http.get(LIST).set('authorization', 'Bearer whsec_wrong');
      expect(res.status).toBe(401);
      expectLimitHeaders(res, 5, 5 - i);
    }
    const guessing = await t.http.get(LIST).set('authorization', 'Bearer whsec_wrong');
    expectError(guessing, 429, 'rate_limited');
    expectRetryAfter(guessing);
    expectLimitHeaders(guessing, 5, 0);

    for (let i = 1; i <= 5; i += 1) {
      const res = await t.http.get(LIST).set('authorization', `Bearer ${a.secret}`);
      expect(res.status).toBe(200);
      expectLimitHeaders(res, 5, 5 - i);
    }
    const over = await t.http.get(LIST).set('authorization', `Bearer ${a.secret}`);
    expectError(over, 429, 'rate_limited');
    expectRetryAfter(over);
    expectLimitHeaders(over, 5, 0);

    await redis.start();
    const prefix = `${process.env.QUEUE_PREFIX}:ratelimit:`;
    const reader = new Redis(redis.url);
    try {
      // The service reconnects by itself; a request of account c is counted in Redis once it has.
      await waitFor(
        async () => {
          await t.http.get(LIST).set('authorization', `Bearer ${c.secret}`);
          return reader.get(`${prefix}account:${c.id}`);
        },
        (count) => count !== null,
        'the limiter to count in Redis again',
      );
      const back = await t.http.get(LIST).set('authorization', `Bearer ${a.secret}`);
      expect(back.status).toBe(200);
      expectLimitHeaders(back, 5, 4);
      expect(await reader.get(`${prefix}account:${a.id}`)).toBe('1');
    } finally {
      reader.disconnect();
    }
  });
});

describe('failed admin, internal and dashboard credentials per source address', () => {
  // One count per address across the three surfaces: each test gets its own keys (queue prefix).
  let n = 0;
  const env = (): Record<string, string> => {
    n += 1;
    return { AUTH_FAILURE_LIMIT_PER_MINUTE: '5', QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_auth${n}` };
  };

  it('admin API: 5 wrong tokens are 401, the 6th 429; the right token still works; another address is not throttled', async () => {
    const t = await startApp(env());
    try {
      for (let i = 0; i < 5; i += 1) {
        const res = await t.http.get(SOME_ACCOUNT).set('authorization', 'Bearer not-the-admin-token');
        expectError(res, 401, 'unauthorized');
        expect(res.headers['www-authenticate']).toBe('Bearer');
      }
      const refused = await t.http.get(SOME_ACCOUNT).set('authorization', 'Bearer not-the-admin-token');
      expectError(refused, 429, 'rate_limited');
      expectRetryAfter(refused);
      const missing = await t.http.get(SOME_ACCOUNT);
      expectError(missing, 429, 'rate_limited');

      const valid = await t.http.post(ACCOUNTS).set('authorization', `Bearer ${t.adminToken}`).send({ name: 'ok' });
      expect(valid.status).toBe(201);

      const elsewhere = await rawRequest(t, SOME_ACCOUNT, { authorization: 'Bearer not-the-admin-token' }, '127.0.0.2');
      expect(elsewhere.status).toBe(401);
    } finally {
      await t.close();
    }
  });

  it('internal API: 5 wrong tokens are 401, the 6th 429; the right token still works', async () => {
    const t = await startApp(env());
    try {
      const account = await createAccount(t);
      const body = { account_id: account.id, external_user_id: 'user-limits' };
      for (let i = 0; i < 5; i += 1) {
        const res = await t.http.post(INTERNAL).set('authorization', `Bearer ${t.adminToken}`).send(body);
        expectError(res, 401, 'unauthorized');
      }
      const refused = await t.http.post(INTERNAL).set('authorization', `Bearer ${t.adminToken}`).send(body);
      expectError(refused, 429, 'rate_limited');
      expectRetryAfter(refused);
      const valid = await t.http.post(INTERNAL).set('authorization', `Bearer ${t.internalToken}`).send(body);
      expect(valid.status).toBe(201);
    } finally {
      await t.close();
    }
  });

  it('dashboard: 5 wrong passwords are 401 Basic, the 6th 429 with the contract body; the right password still works', async () => {
    const t = await startApp(env());
    try {
      for (let i = 0; i < 5; i += 1) {
        const res = await t.http.get(DASHBOARD).set('authorization', basic('wrong'));
        expectError(res, 401, 'unauthorized');
        expect(res.headers['www-authenticate']).toBe('Basic');
      }
      const refused = await t.http.get(DASHBOARD).set('authorization', basic('wrong'));
      expectError(refused, 429, 'rate_limited');
      expectRetryAfter(refused);
      const valid = await t.http.get(DASHBOARD).set('authorization', basic(t.adminToken));
      expect(valid.status).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('still holds, in memory, while Redis is down', async () => {
    const redis = await RedisServer.reserve();
    await redis.start();
    const t = await startApp({ ...env(), REDIS_URL: redis.url });
    try {
      await redis.stop();
      await awayFromMinuteEdge();
      for (let i = 0; i < 5; i += 1) {
        const res = await t.http.get(SOME_ACCOUNT).set('authorization', 'Bearer not-the-admin-token');
        expectError(res, 401, 'unauthorized');
      }
      const refused = await t.http.get(SOME_ACCOUNT).set('authorization', 'Bearer not-the-admin-token');
      expectError(refused, 429, 'rate_limited');
      expectRetryAfter(refused);
      const valid = await t.http.post(ACCOUNTS).set('authorization', `Bearer ${t.adminToken}`).send({ name: 'ok' });
      expect(valid.status).toBe(201);
    } finally {
      await t.close();
      await redis.stop();
    }
  });
});

describe('test events per account', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ TEST_EVENTS_PER_MINUTE: '3' });
  });
  afterAll(async () => {
    await t.close();
  });

  const events = async (accountId: string): Promise<number> => {
    const { rows } = await t.db.query('SELECT count(*)::int AS n FROM webhook_events WHERE account_id = $1', [
      accountId,
    ]);
    return (rows[0] as { n: number }).n;
  };

  it('3 test events are accepted, the 4th is 429 and writes nothing; another account is unaffected', async () => {
    const a = await createAccount(t);
    const b = await createAccount(t);
    const send = (secret: string) =>
      t.http.post(TEST_EVENT).set('authorization', `Bearer ${secret}`).send({ status: 'approved' });
    for (let i = 0; i < 3; i += 1) expect((await send(a.secret)).status).toBe(202);
    const refused = await send(a.secret);
    expectError(refused, 429, 'rate_limited');
    expectRetryAfter(refused);
    expect(await events(a.id)).toBe(3);

    expect((await send(b.secret)).status).toBe(202);
    expect(await events(b.id)).toBe(1);
  });
});
