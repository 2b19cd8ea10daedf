import { createAccount, type CreatedAccount } from './helpers/factories';
import { dbSnapshot, expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';

type Method = 'get' | 'post' | 'patch';

interface Route {
  method: Method;
  path: string;
}

const UNKNOWN_ID = '0193a6f2-0000-7000-8000-000000000000';
/** Routes served outside /api/v1 that are still Nest controllers, so under the same rule. */
const OPERATIONS_ROUTES: Route[] = [
  { method: 'get', path: '/health/live' },
  { method: 'get', path: '/health/ready' },
  { method: 'get', path: '/metrics' },
];

/**
 * Every route refuses input it does not take. The route list comes from the OpenAPI document, so a
 * new controller that forgets the UndeclaredInputGuard (or a route that forgets its DTO) fails here.
 */
describe('undeclared input: every route refuses a query parameter or body it does not take', () => {
  let t: TestApp;
  let account: CreatedAccount;
  let routes: Route[];

  const tokenFor = (path: string): string =>
    path.startsWith('/api/v1/public/')
      ? account.secret
      : path.startsWith('/api/v1/internal/')
        ? t.internalToken
        : t.adminToken;

  beforeAll(async () => {
    t = await startApp();
    account = await createAccount(t);
    const doc = (await t.http.get('/api/docs-json')).body as { paths: Record<string, Record<string, unknown>> };
    routes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/api/v1/'))
      .flatMap(([path, operations]) =>
        Object.keys(operations)
          .filter((method): method is Method => ['get', 'post', 'patch'].includes(method))
          .map((method) => ({ method, path: path.replace(/\{[^}]+\}/g, UNKNOWN_ID) })),
      );
  });
  afterAll(async () => {
    await t.close();
  });

  it('finds every route of the contract in the OpenAPI document', () => {
    // 3 public verification routes (list, detail, redact), 2 internal, 5 admin (the account's webhook
    // endpoint among them), 2 operator-key routes (create, list; DELETE is not probed here), 2 admin
    // audit routes (list, export), 1 legal-hold route (read; PUT and DELETE are not probed here), 6
    // webhook-event routes (the stream among them), 2 webhook-endpoint routes (read, change), and the
    // client's audit view.
    expect(routes).toHaveLength(24);
  });

  it('answers an unknown query parameter with 400 naming it, before any other check, and changes nothing', async () => {
    const before = await dbSnapshot(t.db);
    for (const route of [...routes, ...OPERATIONS_ROUTES]) {
      let req = t.http[route.method](`${route.path}?zz_unknown=1`);
      if (route.path.startsWith('/api/v1/')) req = req.set('authorization', `Bearer ${tokenFor(route.path)}`);
      const res = route.method === 'get' ? await req : await req.send({});
      try {
        expectError(res, 400, 'validation_failed', 'zz_unknown');
      } catch (error) {
        throw new Error(
          `${route.method.toUpperCase()} ${route.path}: ${(error as Error).message}\nbody: ${JSON.stringify(res.body)}`,
          { cause: error },
        );
      }
    }
    expect(await dbSnapshot(t.db)).toEqual(before);
  });

  it('answers a body on a route that takes none with 400 naming its first field', async () => {
    for (const route of [...routes.filter((r) => r.method === 'get'), ...OPERATIONS_ROUTES]) {
      let req = t.http.get(route.path);
      if (route.path.startsWith('/api/v1/')) req = req.set('authorization', `Bearer ${tokenFor(route.path)}`);
      const res = await req.send({ zz_field: 1 });
      try {
        expectError(res, 400, 'validation_failed', 'zz_field');
      } catch (error) {
        throw new Error(`GET ${route.path}: ${(error as Error).message}\nbody: ${JSON.stringify(res.body)}`, {
          cause: error,
        });
      }
    }
  });

  it('checks credentials first: without them the answer is the same 401 whatever the input', async () => {
    for (const route of routes) {
      const req = t.http[route.method](`${route.path}?zz_unknown=1`);
      const res = route.method === 'get' ? await req : await req.send({ zz_field: 1 });
      expectError(res, 401, 'unauthorized');
    }
  });
});
