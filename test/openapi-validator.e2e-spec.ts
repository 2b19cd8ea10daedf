import { Server, createServer } from 'node:http';
import { AddressInfo } from 'node:net';
import request from 'supertest';
import { checkedAgent, unchecked } from './helpers/checked-http';
import {
  CheckedResponse,
  OpenApiMismatchError,
  OpenApiValidator,
  documentValidator,
} from './helpers/openapi-validator';

const ERROR = { $ref: '#/components/schemas/ErrorBody' };
const json = (schema: object) => ({ 'application/json': { schema } });

const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'fixture', version: '1' },
  paths: {
    '/api/v1/things/{id}': {
      get: {
        responses: {
          '200': {
            description: 'a thing',
            headers: {
              'x-request-id': { required: true, schema: { type: 'string' } },
              'RateLimit-Remaining': { $ref: '#/components/headers/Remaining' },
            },
            content: json({ $ref: '#/components/schemas/Thing' }),
          },
          '404': { $ref: '#/components/responses/NotFound' },
        },
      },
      delete: { responses: { '204': { description: 'gone' }, '405': { description: 'no', content: json(ERROR) } } },
    },
    '/api/v1/things/latest': {
      get: { responses: { '200': { description: 'the latest', content: json({ type: 'string' }) } } },
    },
    '/metrics': { get: { responses: { '200': { description: 'text', content: { 'text/plain': {} } } } } },
  },
  components: {
    headers: { Remaining: { schema: { type: 'integer', minimum: 0 } } },
    responses: { NotFound: { description: 'not found', content: json(ERROR) } },
    schemas: {
      Owner: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      Thing: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'count', 'owner', 'parent'],
        properties: {
          id: { type: 'string', format: 'uuid' },
          count: { type: 'integer' },
          owner: { type: 'object', nullable: true, required: ['name'], properties: { name: { type: 'string' } } },
          // OpenAPI 3.0.3: nullable beside $ref/allOf (no type) adds nothing, so null must fail here.
          parent: { allOf: [{ $ref: '#/components/schemas/Owner' }], nullable: true },
          // The 3.0.3 way to say "this $ref or null".
          reviewer: {
            anyOf: [{ $ref: '#/components/schemas/Owner' }, { type: 'object', nullable: true, enum: [null] }],
          },
        },
      },
      ErrorBody: {
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'object', required: ['code'], properties: { code: { type: 'string' } } } },
      },
    },
  },
};

const ID = '0193a6f2-0000-7000-8000-000000000000';
const THING = { id: ID, count: 2, owner: { name: 'a' }, parent: { name: 'b' } };

function response(status: number, body: unknown, headers: Record<string, string> = {}): CheckedResponse {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/plain' : 'application/json; charset=utf-8';
  return {
    status,
    text,
    headers: { 'x-request-id': 'r-1', ...(body === undefined ? {} : { 'content-type': type }), ...headers },
  };
}

function problems(error: OpenApiMismatchError | undefined): string {
  return error?.problems.join('\n') ?? 'none';
}

describe('OpenAPI response validator', () => {
  const validator = new OpenApiValidator(DOCUMENT);
  const path = `/api/v1/things/${ID}`;

  it('passes a response the document describes', () => {
    expect(validator.check('GET', `${path}?x=1`, response(200, THING, { 'ratelimit-remaining': '7' }))).toBeUndefined();
    expect(validator.check('GET', path, response(404, { error: { code: 'not_found' } }))).toBeUndefined();
    expect(validator.check('DELETE', path, response(204, undefined))).toBeUndefined();
    expect(validator.check('GET', '/metrics', response(200, 'up 1'))).toBeUndefined();
  });

  it('fails a status the operation does not declare', () => {
    const error = validator.check('GET', path, response(409, { error: { code: 'x' } }));
    expect(error).toBeInstanceOf(OpenApiMismatchError);
    expect(problems(error)).toContain('status 409 is not documented (declared: 200, 404)');
    expect(error?.message).toContain(`GET ${path} (/api/v1/things/{id}) -> 409`);
  });

  it('fails a body that does not match, naming the field', () => {
    const error = validator.check('GET', path, response(200, { ...THING, count: '2', extra: 1 }));
    expect(problems(error)).toMatch(/body \/count: must be integer/);
    expect(problems(error)).toMatch(/body \/: must NOT have additional properties/);
    expect(validator.check('GET', path, response(200, 'not json'))).toBeInstanceOf(OpenApiMismatchError);
    expect(problems(validator.check('GET', path, response(200, undefined)))).toContain('an empty body');
  });

  it('applies nullable only beside type, as OpenAPI 3.0.3 says', () => {
    expect(validator.check('GET', path, response(200, { ...THING, owner: null }))).toBeUndefined();
    expect(validator.check('GET', path, response(200, { ...THING, reviewer: null }))).toBeUndefined();
    expect(problems(validator.check('GET', path, response(200, { ...THING, reviewer: {} })))).toMatch(
      /body \/reviewer: must have required property 'name'/,
    );
    expect(problems(validator.check('GET', path, response(200, { ...THING, parent: null })))).toMatch(
      /body \/parent: must be object/,
    );
  });

  it('fails a missing required header and a header whose value does not validate', () => {
    const res = response(200, THING, { 'ratelimit-remaining': 'many' });
    delete res.headers['x-request-id'];
    const text = problems(validator.check('GET', path, res));
    expect(text).toContain('header x-request-id: required but missing');
    expect(text).toMatch(/header RateLimit-Remaining "many" \/: must be integer/);
    expect(problems(validator.check('GET', path, response(200, THING, { 'ratelimit-remaining': '-1' })))).toMatch(
      /must be >= 0/,
    );
  });

  it('prefers a literal segment over a template', () => {
    expect(validator.matchPath('/api/v1/things/latest').map((m) => m.template)).toEqual([
      '/api/v1/things/latest',
      '/api/v1/things/{id}',
    ]);
    expect(validator.check('GET', '/api/v1/things/latest', response(200, 'x'))).toBeInstanceOf(OpenApiMismatchError);
    expect(validator.check('GET', '/api/v1/things/latest', response(200, THING))).toBeInstanceOf(OpenApiMismatchError);
    const latest = { status: 200, text: '"x"', headers: { 'content-type': 'application/json' } };
    expect(validator.check('GET', '/api/v1/things/latest', latest)).toBeUndefined();
  });

  it('expects 405 for an undocumented method, 404 under /api/v1/, and leaves other paths alone', () => {
    expect(validator.check('PUT', path, response(405, { error: { code: 'method_not_allowed' } }))).toBeUndefined();
    expect(problems(validator.check('PUT', path, response(200, THING)))).toContain('only 405 is expected');
    expect(validator.check('HEAD', path, { ...response(200, THING), text: '' })).toBeUndefined();
    expect(validator.check('GET', '/api/v1/nope', response(404, { error: { code: 'not_found' } }))).toBeUndefined();
    expect(problems(validator.check('GET', '/api/v1/nope', response(404, { nope: 1 })))).toMatch(
      /must have required property 'error'/,
    );
    expect(problems(validator.check('GET', '/api/v1/nope', response(200, {})))).toContain('only 404 or 405');
    expect(validator.check('GET', '/favicon.ico', response(500, 'boom'))).toBeUndefined();
  });
});

describe('checked t.http', () => {
  let server: Server;
  let url: string;
  const logOnly = process.env.OPENAPI_MISMATCH_LOG_ONLY;
  beforeAll(async () => {
    delete process.env.OPENAPI_MISMATCH_LOG_ONLY;
    server = createServer((req, res) => {
      if (req.url === '/api/docs-json')
        return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(DOCUMENT));
      res.writeHead(req.url === `/api/v1/things/${ID}` ? 200 : 418, {
        'content-type': 'application/json',
        'x-request-id': 'r-1',
      });
      res.end(JSON.stringify({ ...THING, count: 1.5 }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    if (logOnly !== undefined) process.env.OPENAPI_MISMATCH_LOG_ONLY = logOnly;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('rejects the awaited request whose response the document does not describe', async () => {
    const http = checkedAgent(request(url), documentValidator(url));
    await expect(http.get(`/api/v1/things/${ID}`).set('accept', 'application/json')).rejects.toThrow(
      /GET \/api\/v1\/things\/.* -> 200\n {2}- body \/count: must be integer/,
    );
    await expect(http.get('/api/v1/things/x/y')).rejects.toThrow(/only 404 or 405 are expected/);
    // The exemption exists for requests that deliberately leave the contract; this one proves it works.
    expect((await unchecked(http.get(`/api/v1/things/${ID}`))).status).toBe(200);
  });
});
