import { createHmac } from 'node:crypto';
import { createAccount } from './helpers/factories';
import { expectError } from './helpers/expect-error';
import { startIssuer, type TestIssuer } from './helpers/oidc-issuer';
import { TestApp, freePort, startApp } from './helpers/test-app';

const AUDIENCE = 'https://kyc.example/admin';
const ACCOUNTS = '/api/v1/admin/accounts';
const KEYS = '/api/v1/admin/operator-keys';

const b64url = (value: object | string): string =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('operators: OIDC access tokens', () => {
  let issuer: TestIssuer;
  let t: TestApp;
  let accountId: string;
  let firstVerification = 0;
  beforeAll(async () => {
    issuer = await startIssuer(AUDIENCE);
    t = await startApp({ OIDC_ISSUER_URL: issuer.url, OIDC_AUDIENCE: AUDIENCE });
    accountId = (await createAccount(t)).id;
  });
  afterAll(async () => {
    await t.close();
    await issuer.stop();
  });

  const as = <T extends { set(name: string, value: string): T }>(token: string, req: T): T =>
    req.set('authorization', `Bearer ${token}`);
  const now = (): number => Math.floor(Date.now() / 1000);
  const claims = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    sub: 'alice-sub',
    email: 'alice@ops.example',
    roles: ['admin'],
    iss: issuer.url,
    aud: AUDIENCE,
    iat: now(),
    exp: now() + 300,
    ...extra,
  });

  it.each([
    ['viewer-bot', 200, 403, 403],
    ['operator-bot', 200, 200, 403],
    ['compliance-bot', 200, 403, 403],
    ['auditor-bot', 403, 403, 403],
    ['admin-bot', 200, 200, 200],
    ['unknown-bot', 403, 403, 403],
  ])('a token of %s: read %i, change %i, operator keys %i', async (client, read, change, keys) => {
    const token = await issuer.token(client);
    expect((await as(token, t.http.get(`${ACCOUNTS}/${accountId}`))).status).toBe(read);
    // Stamped once the first token was checked: the JWKS's 30 s window starts at that fetch, not before.
    firstVerification ||= Date.now();
    const patched = await as(token, t.http.patch(`${ACCOUNTS}/${accountId}`)).send({ name: `renamed by ${client}` });
    expect(patched.status).toBe(change);
    if (change === 403) expectError(patched, 403, 'forbidden');
    expect((await as(token, t.http.get(KEYS))).status).toBe(keys);
  });

  it('roles may be one space-separated string; the name is email, else preferred_username, else sub', async () => {
    const token = await issuer.sign(claims({ roles: 'viewer operator' }));
    expect((await as(token, t.http.patch(`${ACCOUNTS}/${accountId}`)).send({ name: 'by alice' })).status).toBe(200);
  });

  it.each([
    ['the wrong audience', async () => issuer.token('admin-bot', 'https://other.example/api')],
    ['an expired token (beyond the 60 s leeway)', async () => issuer.sign(claims({ exp: now() - 120 }))],
    ['nbf in the future', async () => issuer.sign(claims({ nbf: now() + 120 }))],
    ['iat in the future', async () => issuer.sign(claims({ iat: now() + 120 }))],
    ['no exp', async () => issuer.sign(claims({ exp: undefined }))],
    ['another issuer', async () => issuer.sign(claims({ iss: 'http://127.0.0.1:1' }))],
    ['no sub', async () => issuer.sign(claims({ sub: undefined }))],
    ['a garbled token', async () => 'eyJhbGciOiJFUzI1NiJ9.garbled.sig'],
  ])('%s: 401', async (_, make) => {
    const res = await as(await make(), t.http.get(`${ACCOUNTS}/${accountId}`));
    expectError(res, 401, 'unauthorized');
    expect(res.headers['www-authenticate']).toBe('Bearer');
  });

  it('an expiry within the 60 s leeway is still accepted', async () => {
    const token = await issuer.sign(claims({ exp: now() - 20 }));
    expect((await as(token, t.http.get(`${ACCOUNTS}/${accountId}`))).status).toBe(200);
  });

  it('alg none and an HS256 token forged with the public key as secret: 401', async () => {
    const jwks = (await (await fetch(`${issuer.url}/jwks`)).json()) as { keys: { kid: string }[] };
    const kid = jwks.keys[0].kid;
    const payload = b64url(claims());
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    expectError(await as(none, t.http.get(`${ACCOUNTS}/${accountId}`)), 401, 'unauthorized');
    const head = b64url({ alg: 'HS256', typ: 'JWT', kid });
    const mac = createHmac('sha256', JSON.stringify(jwks.keys[0])).update(`${head}.${payload}`).digest('base64url');
    expectError(await as(`${head}.${payload}.${mac}`, t.http.get(`${ACCOUNTS}/${accountId}`)), 401, 'unauthorized');
  });

  it('after a key rotation, a token with the new kid is accepted (the JWKS is fetched again)', async () => {
    // The process holds the keys from before the rotation...
    expect((await as(await issuer.token('admin-bot'), t.http.get(KEYS))).status).toBe(200);
    firstVerification ||= Date.now();
    // ...and fetches the JWKS again at most once per 30 s: wait out the window since the first fetch.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstVerification + 31_000 - Date.now())));
    await issuer.rotate();
    const token = await issuer.token('admin-bot');
    expect((await as(token, t.http.get(KEYS))).status).toBe(200);
  }, 60_000);

  it('issuer down: a process with its JWKS cached keeps verifying; one without answers OIDC tokens 503 and the rest works', async () => {
    const token = await issuer.token('viewer-bot');
    await issuer.stop();
    expect((await as(token, t.http.get(`${ACCOUNTS}/${accountId}`))).status).toBe(200);

    const fresh = await startApp({ OIDC_ISSUER_URL: `http://127.0.0.1:${await freePort()}`, OIDC_AUDIENCE: AUDIENCE });
    try {
      expectError(await as(token, fresh.http.get(`${ACCOUNTS}/${accountId}`)), 503, 'service_unavailable');
      expect((await as(fresh.adminToken, fresh.http.get(`${ACCOUNTS}/${accountId}`))).status).toBe(200);
      const key = await as(fresh.adminToken, fresh.http.post(KEYS)).send({ name: 'during outage', role: 'viewer' });
      expect((await as(key.body.key, fresh.http.get(`${ACCOUNTS}/${accountId}`))).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });

  it('a half-given or insecure OIDC setting stops the start with one line naming the variable', async () => {
    for (const [env, variable] of [
      [{ OIDC_ISSUER_URL: issuer.url }, 'OIDC_AUDIENCE'],
      [{ OIDC_AUDIENCE: AUDIENCE }, 'OIDC_ISSUER_URL'],
      [{ OIDC_ISSUER_URL: 'http://id.example', OIDC_AUDIENCE: AUDIENCE }, 'OIDC_ISSUER_URL'],
    ] as const) {
      const app = await startApp(env, { waitForHttp: false });
      const code =
        app.process.exitCode ?? (await new Promise((resolve) => app.process.once('exit', (exit) => resolve(exit))));
      await app.db.end();
      expect(code).not.toBe(0);
      expect(app.output.join('')).toContain(variable);
    }
  });
});
