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
  components: { securitySchemes: Record<string, { type: string; scheme: string }>; schemas: Record<string, unknown> };
};

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

  it('is OpenAPI 3 with the three bearer schemes and the error body', () => {
    expect(doc.openapi).toMatch(/^3\./);
    for (const name of ['client', 'internal', 'admin']) {
      expect(doc.components.securitySchemes[name]).toMatchObject({ type: 'http', scheme: 'bearer' });
    }
    expect(doc.components.schemas.ErrorBody).toBeDefined();
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
        expect({ path, method, schema: success[0][1].content?.['application/json']?.schema }).toEqual({
          path,
          method,
          schema: expect.anything(),
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
