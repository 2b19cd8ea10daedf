import type { Test } from 'supertest';
import { expectError } from './helpers/expect-error';
import { startIssuer, type TestIssuer } from './helpers/oidc-issuer';
import { TestApp, startApp } from './helpers/test-app';

const AUDIENCE = 'https://kyc.example/admin';
const QUEUES = '/admin/queues/api/queues';
const QUEUE = 'webhook-deliveries';

describe('queue dashboard: operator credentials', () => {
  let issuer: TestIssuer;
  let t: TestApp;
  const keys: Record<string, { id: string; key: string }> = {};
  beforeAll(async () => {
    issuer = await startIssuer(AUDIENCE);
    t = await startApp({ OIDC_ISSUER_URL: issuer.url, OIDC_AUDIENCE: AUDIENCE });
    for (const role of ['viewer', 'operator', 'auditor']) {
      const res = await t.http
        .post('/api/v1/admin/operator-keys')
        .set('authorization', `Bearer ${t.adminToken}`)
        .send({ name: `${role} console`, role });
      keys[role] = res.body;
    }
  });
  afterAll(async () => {
    await t.close();
    await issuer.stop();
  });

  const bearer = (token: string, req: Test): Test => req.set('authorization', `Bearer ${token}`);
  const paused = async (): Promise<boolean> => {
    const basic = Buffer.from(`admin:${t.adminToken}`).toString('base64');
    const res = await t.http.get(QUEUES).set('authorization', `Basic ${basic}`);
    expect(res.status).toBe(200);
    return (res.body.queues as { name: string; isPaused: boolean }[]).find((q) => q.name === QUEUE)?.isPaused ?? false;
  };

  it('an operator key reads with accounts:read and acts with accounts:write; else 403 and nothing changes', async () => {
    expect((await bearer(keys.viewer.key, t.http.get(QUEUES))).status).toBe(200);
    expectError(await bearer(keys.auditor.key, t.http.get(QUEUES)), 403, 'forbidden');
    expectError(await bearer(keys.viewer.key, t.http.put(`${QUEUES}/${QUEUE}/pause`)), 403, 'forbidden');
    expect(await paused()).toBe(false);

    expect((await bearer(keys.operator.key, t.http.put(`${QUEUES}/${QUEUE}/pause`))).status).toBe(200);
    expect(await paused()).toBe(true);
    expect((await bearer(keys.operator.key, t.http.put(`${QUEUES}/${QUEUE}/resume`))).status).toBe(200);
    expect(await paused()).toBe(false);
  });

  it('an OIDC access token works the same way', async () => {
    const viewer = await issuer.token('viewer-bot');
    expect((await bearer(viewer, t.http.get(QUEUES))).status).toBe(200);
    expectError(await bearer(viewer, t.http.put(`${QUEUES}/${QUEUE}/pause`)), 403, 'forbidden');
    const operator = await issuer.token('operator-bot');
    expect((await bearer(operator, t.http.put(`${QUEUES}/${QUEUE}/pause`))).status).toBe(200);
    expect((await bearer(operator, t.http.put(`${QUEUES}/${QUEUE}/resume`))).status).toBe(200);
    expect(await paused()).toBe(false);
  });

  it('no credential, an unknown or revoked key, a forged token: 401 with a Basic challenge; Basic admin works', async () => {
    await t.http.delete(`/api/v1/admin/operator-keys/${keys.viewer.id}`).set('authorization', `Bearer ${t.adminToken}`);
    for (const req of [
      t.http.get(QUEUES),
      bearer(keys.viewer.key, t.http.get(QUEUES)),
      bearer(`kyc_op_${'A'.repeat(43)}`, t.http.get(QUEUES)),
      bearer('eyJhbGciOiJub25lIn0.e30.', t.http.get(QUEUES)),
    ]) {
      const res = await req;
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toBe('Basic');
    }
    expect(await paused()).toBe(false);
  });
});
