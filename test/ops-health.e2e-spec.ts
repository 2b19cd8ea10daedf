import { createAccount } from './helpers/factories';
import { OwnRedis, TcpProxy, databaseServer, jsonLines, startOwnRedis, startTcpProxy } from './helpers/ops-infra';
import { TestApp, startApp } from './helpers/test-app';

function databaseUrlThrough(port: number): string {
  const url = new URL(process.env.DATABASE_URL as string);
  url.port = String(port);
  return url.toString();
}

describe('health', () => {
  it('is live and ready with PostgreSQL and Redis up, without auth', async () => {
    const t = await startApp();
    try {
      const live = await t.http.get('/health/live');
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: 'ok' });
      const ready = await t.http.get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({ status: 'ok' });
    } finally {
      await t.close();
    }
  });

  describe('with Redis down', () => {
    let redis: OwnRedis;
    let t: TestApp;
    beforeAll(async () => {
      redis = await startOwnRedis();
      t = await startApp({ REDIS_URL: redis.url, LOG_LEVEL: 'info' });
    });
    afterAll(async () => {
      await t.close();
      await redis.stop();
    });

    it('reports redis down with 503 service_unavailable, stays live, and recovers', async () => {
      expect((await t.http.get('/health/ready')).status).toBe(200);
      await redis.stop();
      const started = Date.now();
      const ready = await t.http.get('/health/ready').set('x-request-id', 'ready-redis-down');
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(ready.status).toBe(503);
      expect(ready.body.error).toMatchObject({ code: 'service_unavailable', request_id: 'ready-redis-down' });
      expect(ready.body.error.details).toEqual([{ field: 'redis', issue: 'down' }]);
      expect((await t.http.get('/health/live')).status).toBe(200);
      // A log line written inside the request carries its id.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const inner = jsonLines(t.output).find(
        (line) => line.msg === 'not ready' && line.request_id === 'ready-redis-down',
      );
      expect(inner).toBeDefined();

      redis = await startOwnRedis(redis.port);
      const deadline = Date.now() + 10_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = (await t.http.get('/health/ready')).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(status).toBe(200);
    });
  });

  describe('with PostgreSQL gone away', () => {
    let proxy: TcpProxy;
    let t: TestApp;
    beforeAll(async () => {
      proxy = await startTcpProxy(databaseServer().port, databaseServer().host);
      t = await startApp({ DATABASE_URL: databaseUrlThrough(proxy.port) });
    });
    afterAll(async () => {
      await t.close();
      await proxy.close();
    });

    it('answers API routes 503 quickly, reports postgres down, survives, and recovers without restart', async () => {
      const account = await createAccount(t);
      const auth = `Bearer ${account.secret}`;
      expect((await t.http.get('/api/v1/public/kyc/verifications').set('authorization', auth)).status).toBe(200);

      await proxy.cut();
      for (const send of [
        () => t.http.get('/api/v1/public/kyc/verifications').set('authorization', auth),
        () => t.http.get(`/api/v1/admin/accounts/${account.id}`).set('authorization', `Bearer ${t.adminToken}`),
        () =>
          t.http
            .post('/api/v1/internal/kyc/verifications')
            .set('authorization', `Bearer ${t.internalToken}`)
            .send({ account_id: account.id, external_user_id: 'u1' }),
      ]) {
        const started = Date.now();
        const res = await send();
        expect(Date.now() - started).toBeLessThan(3_000);
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('service_unavailable');
        expect(JSON.stringify(res.body)).not.toMatch(/ECONNREFUSED|127\.0\.0\.1|SELECT|stack/i);
      }
      // Every public response carries the rate-limit headers, this one too.
      const publicDown = await t.http.get('/api/v1/public/kyc/verifications').set('authorization', auth);
      expect(publicDown.status).toBe(503);
      expect(publicDown.headers['ratelimit-limit']).toBe('1200');
      expect(Number(publicDown.headers['ratelimit-remaining'])).toBeGreaterThanOrEqual(0);
      expect(Number(publicDown.headers['ratelimit-reset'])).toBeGreaterThan(0);
      const ready = await t.http.get('/health/ready');
      expect(ready.status).toBe(503);
      expect(ready.body.error.details).toEqual([{ field: 'postgres', issue: 'down' }]);
      expect((await t.http.get('/health/live')).status).toBe(200);
      expect(t.process.exitCode).toBeNull();

      await proxy.restore();
      const deadline = Date.now() + 10_000;
      let status = 0;
      while (Date.now() < deadline && status !== 200) {
        status = (await t.http.get('/api/v1/public/kyc/verifications').set('authorization', auth)).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(status).toBe(200);
      expect((await t.http.get('/health/ready')).status).toBe(200);
    });
  });
  describe('started while PostgreSQL is unreachable', () => {
    let proxy: TcpProxy;
    let t: TestApp;
    beforeAll(async () => {
      proxy = await startTcpProxy(databaseServer().port, databaseServer().host);
      await proxy.cut();
      t = await startApp({ DATABASE_URL: databaseUrlThrough(proxy.port) });
    });
    afterAll(async () => {
      await t.close();
      await proxy.close();
    });

    it('serves 503 on API routes, then connects on its own once PostgreSQL is back', async () => {
      const res = await t.http
        .get(`/api/v1/admin/accounts/${'0'.repeat(8)}-0000-7000-8000-${'0'.repeat(12)}`)
        .set('authorization', `Bearer ${t.adminToken}`);
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({
        code: 'service_unavailable',
        details: [{ field: 'postgres', issue: 'down' }],
      });
      expect((await t.http.get('/health/ready')).status).toBe(503);
      expect((await t.http.get('/health/live')).status).toBe(200);

      await proxy.restore();
      const deadline = Date.now() + 15_000;
      let account = await t.http
        .post('/api/v1/admin/accounts')
        .set('authorization', `Bearer ${t.adminToken}`)
        .send({ name: 'late' });
      while (account.status !== 201 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        account = await t.http
          .post('/api/v1/admin/accounts')
          .set('authorization', `Bearer ${t.adminToken}`)
          .send({ name: 'late' });
      }
      expect(account.status).toBe(201);
      expect((await t.http.get('/health/ready')).status).toBe(200);
    });
  });
});
