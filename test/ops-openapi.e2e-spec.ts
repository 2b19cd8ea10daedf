import { createAccount } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';

type Document = {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        security?: Record<string, string[]>[];
        responses: Record<
          string,
          { content?: Record<string, { schema?: { $ref?: string } }>; headers?: Record<string, unknown> }
        >;
      }
    >
  >;
  servers: { url: string }[];
  components: {
    securitySchemes: Record<string, { type: string; scheme: string; bearerFormat?: string }>;
    schemas: Record<string, unknown>;
  };
};

type Scheme = 'client' | 'internal' | 'admin';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const SAMPLE_ID = '0193a6f2-0000-7000-8000-000000000000';

/** Turns `/api/v1/x/{id}/y` into a concrete path the app would route. */
function concrete(path: string): string {
  return path.replace(/\{[^}]+\}/g, SAMPLE_ID);
}

describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: Document;
  beforeAll(async () => {
    t = await startApp();
    const res = await t.http.get('/api/docs-json');
    expect(res.status).toBe(200);
    doc = res.body as Document;
  });
  afterAll(async () => {
    await t.close();
  });

  it('is OpenAPI 3 with a server, three opaque bearer schemes and the error body', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.servers.length).toBeGreaterThan(0);
    const formats = new Set<string | undefined>();
    for (const name of ['client', 'internal', 'admin']) {
      const scheme = doc.components.securitySchemes[name];
      expect(scheme).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(scheme.bearerFormat).not.toMatch(/jwt/i);
      formats.add(JSON.stringify(scheme));
    }
    expect(formats.size).toBe(3);
    expect(doc.components.schemas.ErrorBody).toBeDefined();
  });

  it('gives every operation the scheme its route really requires: the others are 401, its own is not', async () => {
    const account = await createAccount(t);
    const credentials: Record<Scheme, string> = {
      client: account.secret,
      internal: t.internalToken,
      admin: t.adminToken,
    };
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const route = `${method.toUpperCase()} ${path}`;
        const call = async (token?: string): Promise<{ status: number }> => {
          if (path.endsWith('/stream')) {
            // The event stream never ends by itself: its status is all this needs, then it is closed.
            const res = await fetch(`${t.url}${concrete(path)}`, {
              headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
            });
            await res.body?.cancel();
            return { status: res.status };
          }
          const req = t.http[method as 'get'](concrete(path));
          return token === undefined ? req : req.set('authorization', `Bearer ${token}`);
        };
        if (!path.startsWith('/api/v1/')) {
          expect({ route, security: operation.security }).toEqual({ route, security: [] });
          expect({ route, status: (await call()).status }).toEqual({ route, status: 200 });
          continue;
        }
        const required = Object.keys(operation.security?.[0] ?? {})[0] as Scheme;
        for (const [scheme, token] of Object.entries(credentials) as [Scheme, string][]) {
          const status = (await call(token)).status;
          expect({ route, scheme, unauthorized: status === 401 }).toEqual({
            route,
            scheme,
            unauthorized: scheme !== required,
          });
        }
        expect({ route, status: (await call(`${credentials[required]}x`)).status }).toEqual({ route, status: 401 });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(14);
  });

  it("names on every admin operation the permission it needs and the roles that grant it, as the contract's table", () => {
    // The contract's roles table, written out here apart from src/auth/permissions.ts.
    const grants: Record<string, string[]> = {
      'accounts:read': ['viewer', 'operator', 'compliance', 'admin'],
      'accounts:write': ['operator', 'admin'],
      'secrets:rotate': ['admin'],
      'legal_holds:manage': ['compliance', 'admin'],
      'audit:read': ['compliance', 'auditor', 'admin'],
      'operator_keys:manage': ['admin'],
    };
    const expected: Record<string, string> = {
      'get /api/v1/admin/accounts/{id}': 'accounts:read',
      'post /api/v1/admin/accounts': 'accounts:write',
      'post /api/v1/admin/accounts/{id}/secret/rotate': 'secrets:rotate',
      'get /api/v1/admin/audit-events': 'audit:read',
      'get /api/v1/admin/audit-events/export': 'audit:read',
      'post /api/v1/admin/operator-keys': 'operator_keys:manage',
    };
    const seen: Record<string, string> = {};
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/admin/')) continue;
      for (const [method, operation] of Object.entries(item)) {
        const op = operation as { 'x-permission'?: string; 'x-roles'?: string[]; description?: string };
        const permission = op['x-permission'] ?? 'none';
        expect({ route: `${method} ${path}`, permission: permission in grants }).toEqual({
          route: `${method} ${path}`,
          permission: true,
        });
        expect(op['x-roles']).toEqual(grants[permission]);
        expect(op.description).toContain(`\`${permission}\``);
        seen[`${method} ${path}`] = permission;
      }
    }
    expect(seen).toMatchObject(expected);
  });

  it('serves Swagger UI at /api/docs', async () => {
    const res = await t.http.get('/api/docs').redirects(2);
    expect(res.status).toBe(200);
    expect(res.text).toContain('swagger');
  });

  it('documents every /api/v1 operation with its auth scheme and the error body', () => {
    const apiPaths = Object.keys(doc.paths).filter((path) => path.startsWith('/api/v1/'));
    expect(apiPaths.length).toBeGreaterThan(5);
    for (const path of apiPaths) {
      for (const [method, operation] of Object.entries(doc.paths[path])) {
        const scheme = path.startsWith('/api/v1/public/')
          ? 'client'
          : path.startsWith('/api/v1/internal/')
            ? 'internal'
            : 'admin';
        expect({ path, method, security: operation.security }).toEqual({ path, method, security: [{ [scheme]: [] }] });
        expect(operation.responses['401']?.content?.['application/json']?.schema?.$ref).toBe(
          '#/components/schemas/ErrorBody',
        );
        const success = Object.entries(operation.responses).filter(([status]) => status.startsWith('2'));
        expect(success.length).toBe(1);
        // A 204 (the contract's DELETE of an operator key) has no body; every other success has its
        // schema, under its media type (JSON, the audit export's NDJSON, the event stream's SSE).
        const body = Object.values(success[0][1].content ?? {})[0] as { schema?: unknown } | undefined;
        expect({ path, method, schema: body?.schema }).toEqual({
          path,
          method,
          schema: success[0][0] === '204' ? undefined : expect.anything(),
        });
        if (scheme === 'client') {
          expect(operation.responses['429']).toBeDefined();
          expect(Object.keys(operation.responses['200'] ?? operation.responses['202'] ?? {})).toContain('headers');
        }
      }
    }
  });

  it('documents exactly the /api/v1 routes the app serves', async () => {
    // Every documented operation is routed: an unauthenticated call is 401, never 404/405.
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const method of Object.keys(item)) {
        documented.add(`${method.toUpperCase()} ${path}`);
        const res = await t.http[method as 'get'](concrete(path));
        expect({ route: `${method} ${path}`, status: res.status }).toEqual({ route: `${method} ${path}`, status: 401 });
      }
    }
    // Every routed /api/v1 method is documented: probe each documented path (and its parents)
    // with every method; whatever the app does not answer 404/405 must be in the document.
    const candidates = new Set<string>();
    for (const path of Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/'))) {
      const parts = path.split('/');
      for (let i = 4; i <= parts.length; i += 1) candidates.add(parts.slice(0, i).join('/'));
    }
    const templates = [...documented].map((entry) => {
      const [method, path] = entry.split(' ');
      return { method, pattern: new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`) };
    });
    for (const path of candidates) {
      for (const method of METHODS) {
        const res = await t.http[method as 'get'](concrete(path));
        const routed = res.status !== 404 && res.status !== 405;
        const isDocumented = templates.some(
          (tpl) => tpl.method === method.toUpperCase() && tpl.pattern.test(concrete(path)),
        );
        expect({ route: `${method} ${path}`, routed }).toEqual({ route: `${method} ${path}`, routed: isDocumented });
      }
    }
  });
});
