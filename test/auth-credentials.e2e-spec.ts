import {
  createAccount,
  createVerification,
  createVerificationInStatus,
  type CreatedAccount,
} from './helpers/factories';
import { dbSnapshot, expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';

type Family = 'public' | 'internal' | 'admin';

interface Route {
  family: Family;
  name: string;
  method: 'get' | 'post' | 'patch';
  path: () => string;
  body?: () => object;
  ok: number;
}

describe('authentication', () => {
  let t: TestApp;
  let account: CreatedAccount;
  let verificationId: string;
  let processingId: string;
  let rotated: CreatedAccount;
  const body401: unknown[] = [];

  beforeAll(async () => {
    t = await startApp();
    account = await createAccount(t);
    verificationId = (await createVerification(t, account.id)).id;
    processingId = (await createVerificationInStatus(t, account.id, 'processing')).id;
    rotated = await createAccount(t);
  });
  afterAll(async () => {
    await t.close();
  });

  // Moves back and forth (pending <-> processing) so every accepted call is a valid transition.
  let current = 'pending';
  const nextMove = (): string => (current === 'pending' ? 'processing' : 'pending');

  const routes: Route[] = [
    { family: 'public', name: 'list', method: 'get', path: () => '/api/v1/public/kyc/verifications', ok: 200 },
    {
      family: 'public',
      name: 'detail',
      method: 'get',
      path: () => `/api/v1/public/kyc/verifications/${verificationId}`,
      ok: 200,
    },
    {
      family: 'internal',
      name: 'create',
      method: 'post',
      path: () => '/api/v1/internal/kyc/verifications',
      body: () => ({ account_id: account.id, external_user_id: 'auth-test' }),
      ok: 201,
    },
    {
      family: 'internal',
      name: 'transition',
      method: 'post',
      path: () => `/api/v1/internal/kyc/verifications/${verificationId}/transitions`,
      body: () => ({ status: nextMove() }),
      ok: 200,
    },
    {
      family: 'admin',
      name: 'create account',
      method: 'post',
      path: () => '/api/v1/admin/accounts',
      body: () => ({ name: 'auth-test' }),
      ok: 201,
    },
    {
      family: 'admin',
      name: 'get account',
      method: 'get',
      path: () => `/api/v1/admin/accounts/${account.id}`,
      ok: 200,
    },
    {
      family: 'admin',
      name: 'patch account',
      method: 'patch',
      path: () => `/api/v1/admin/accounts/${account.id}`,
      body: () => ({ name: 'renamed' }),
      ok: 200,
    },
    {
      family: 'admin',
      name: 'rotate secret',
      method: 'post',
      path: () => `/api/v1/admin/accounts/${rotated.id}/secret/rotate`,
      body: () => ({}),
      ok: 200,
    },
  ];

  const tokenOf = (kind: Family): string =>
    ({ public: account.secret, internal: t.internalToken, admin: t.adminToken })[kind];
  const send = (route: Route, authorization: string | undefined) => {
    let req = t.http[route.method](route.path());
    if (authorization !== undefined) req = req.set('authorization', authorization);
    return route.body ? req.send(route.body()) : req;
  };

  const badCredentials = (route: Route): [string, () => string | undefined][] => [
    ['no header', () => undefined],
    ['an empty header', () => ''],
    ['the scheme alone', () => 'Bearer'],
    ['the scheme and a space', () => 'Bearer '],
    ['another scheme', () => `Basic ${Buffer.from(`admin:${t.adminToken}`).toString('base64')}`],
    ['the token without a scheme', () => tokenOf(route.family)],
    ['two tokens', () => `Bearer ${tokenOf(route.family)} ${tokenOf(route.family)}`],
    ['a token with a suffix', () => `Bearer ${tokenOf(route.family)}x`],
    ['an unknown webhook secret', () => `Bearer whsec_${Buffer.alloc(32, 7).toString('base64')}`],
    ['an unknown opaque token', () => 'Bearer 0123456789abcdef0123456789abcdef'],
    ...(['public', 'internal', 'admin'] as Family[])
      .filter((kind) => kind !== route.family)
      .map((kind): [string, () => string] => [`a ${kind} credential`, () => `Bearer ${tokenOf(kind)}`]),
  ];

  describe.each(routes.map((route) => [`${route.family} ${route.name}`, route] as const))('%s', (_, route) => {
    it.each(badCredentials(route))(
      'refuses %s with 401, WWW-Authenticate: Bearer and no change',
      async (__, header) => {
        const before = await dbSnapshot(t.db);
        const res = await send(route, header());
        expectError(res, 401, 'unauthorized');
        expect(res.headers['www-authenticate']).toBe('Bearer');
        expect(res.body.error.details).toEqual([]);
        body401.push({ ...res.body.error, request_id: undefined });
        expect(await dbSnapshot(t.db)).toEqual(before);
      },
    );

    it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the scheme word as %s', async (scheme) => {
      const res = await send(route, `${scheme} ${tokenOf(route.family)}`);
      expect(res.status).toBe(route.ok);
      if (route.name === 'transition') current = res.body.status;
    });
  });

  it('every 401 body is identical apart from its request id', () => {
    expect(body401.length).toBeGreaterThan(50);
    for (const body of body401) expect(body).toEqual(body401[0]);
  });

  it('a secret authenticates only its own account', async () => {
    const other = await createAccount(t);
    const res = await t.http
      .get(`/api/v1/public/kyc/verifications/${processingId}`)
      .set('authorization', `Bearer ${other.secret}`);
    expectError(res, 404, 'not_found');
    const list = await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${other.secret}`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
  });
});
