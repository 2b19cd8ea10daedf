import { createAccount, createVerificationInStatus } from './helpers/factories';
import { jsonLines } from './helpers/ops-infra';
import { TestApp, startApp } from './helpers/test-app';

describe('structured logs', () => {
  let t: TestApp;
  const secrets: string[] = [];
  beforeAll(async () => {
    t = await startApp({ LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('writes one JSON line per request with request id, account id, route template, status and duration', async () => {
    const account = await createAccount(t, { webhook_url: 'http://127.0.0.1:9/hook' });
    secrets.push(account.secret);
    const v = await createVerificationInStatus(t, account.id, 'approved');
    const res = await t.http
      .get(`/api/v1/public/kyc/verifications/${v.id}`)
      .set('authorization', `Bearer ${account.secret}`)
      .set('x-request-id', 'log-test-detail');
    expect(res.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const line = jsonLines(t.output).find(
      (entry) => entry.request_id === 'log-test-detail' && entry.status !== undefined,
    );
    expect(line).toMatchObject({
      level: 'info',
      request_id: 'log-test-detail',
      account_id: account.id,
      method: 'GET',
      route: '/api/v1/public/kyc/verifications/:id',
      status: 200,
    });
    expect(typeof line?.duration_ms).toBe('number');
    expect(JSON.stringify(line)).not.toContain(v.id); // the template, not the raw URL
  });

  it('never logs a webhook secret, a token or an authorization header, on success or failure', async () => {
    const account = await createAccount(t);
    secrets.push(account.secret);
    const rotated = await t.http
      .post(`/api/v1/admin/accounts/${account.id}/secret/rotate`)
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ grace_period_seconds: 60 });
    expect(rotated.status).toBe(200);
    secrets.push(rotated.body.webhook_secret);
    for (const secret of secrets) {
      expect(
        (await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${secret}`)).status,
      ).toBe(200);
      // The same secret in the wrong place: a query parameter (400) and a body field (400/401).
      await t.http
        .get(`/api/v1/public/kyc/verifications?token=${encodeURIComponent(secret)}`)
        .set('authorization', `Bearer ${secret}`);
      await t.http.get('/api/v1/internal/kyc/verifications').set('authorization', `Bearer ${secret}`);
    }
    const unknownSecret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    expect(
      (await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${unknownSecret}`)).status,
    ).toBe(401);
    await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${t.adminToken}`);
    await t.http
      .post('/api/v1/internal/kyc/verifications')
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ nope: t.internalToken });
    await t.http.post('/api/v1/admin/accounts').set('authorization', `Bearer ${t.internalToken}`).send({ name: 'x' });
    await new Promise((resolve) => setTimeout(resolve, 300));

    const text = t.output.join('');
    expect(text.length).toBeGreaterThan(0);
    for (const value of [
      ...secrets,
      unknownSecret,
      t.adminToken,
      t.internalToken,
      process.env.SECRET_ENCRYPTION_KEY as string,
    ]) {
      expect(text).not.toContain(value);
    }
    expect(text.toLowerCase()).not.toContain('"authorization"');
  });

  it('stamps every line written while serving a request with its request id', async () => {
    await t.http.get('/health/live').set('x-request-id', 'log-test-live');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const requestLines = jsonLines(t.output).filter(
      (entry) => typeof entry.method === 'string' && typeof entry.status === 'number',
    );
    expect(requestLines.length).toBeGreaterThan(5);
    for (const entry of requestLines) expect(entry.request_id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });
});

describe('start and stop lines', () => {
  it('says once when it is ready (role, port, docs) and once at SIGTERM and at exit what it drained', async () => {
    const t = await startApp({ LOG_LEVEL: 'info', APP_ROLE: 'all' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const info = jsonLines(t.output).filter((entry) => entry.level === 'info');
    const ready = info.filter((entry) => typeof entry.msg === 'string' && entry.msg.startsWith('ready:'));
    expect(ready).toHaveLength(1);
    expect(ready[0]).toMatchObject({ role: 'all', port: t.port, docs: '/api/docs' });
    // Nest's narration of modules and routes is debug, not info.
    const boot = info.filter((entry) =>
      ['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication'].includes(
        String(entry.context),
      ),
    );
    expect(boot).toEqual([]);
    expect(info.length).toBeLessThanOrEqual(6);

    expect(await t.close()).toBe(0);
    const lines = jsonLines(t.output);
    const atSignal = lines.filter((entry) => String(entry.msg).startsWith('SIGTERM:'));
    const atExit = lines.filter((entry) => String(entry.msg).startsWith('drained in'));
    expect(atSignal).toHaveLength(1);
    expect(atSignal[0]).toMatchObject({ level: 'info', signal: 'SIGTERM', role: 'all', deliveries_in_flight: 0 });
    expect(typeof atSignal[0].requests_in_flight).toBe('number');
    expect(atExit).toHaveLength(1);
    expect(atExit[0]).toMatchObject({ level: 'info', requests_abandoned: 0, deliveries_waited_for: 0 });
    expect(typeof atExit[0].requests_answered).toBe('number');
    expect(typeof atExit[0].duration_ms).toBe('number');
  });
});
