import fc from 'fast-check';
import { request as httpRequest } from 'node:http';
import { Socket, connect } from 'node:net';
import { createAccount, createVerification } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

interface Route {
  method: 'GET' | 'POST' | 'PATCH';
  path: string;
  auth: string;
}

const QUERY_CHARS = [...'abcdefghijklmnopqrstuvwxyz_ABCXYZ0123456789-.~!$&\'()*+,;=:@/?%[]{}|^`"<>\\'];
const queryText = fc.string({ unit: fc.constantFrom(...QUERY_CHARS), maxLength: 80 });
const queryPairs = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom(
          'limit',
          'cursor',
          'status',
          'q',
          'sort',
          'created_from',
          'delivery_status',
          'verification_id',
          '__proto__',
        ),
        fc.string({ maxLength: 12 }),
      ),
      fc.oneof(fc.string({ maxLength: 40 }), fc.integer().map(String), fc.constant('')),
    ),
    { maxLength: 5 },
  )
  .map((pairs) => pairs.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&'));
const anyQuery = fc.oneof(queryText, queryPairs);
const anyBody = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc
    .dictionary(
      fc.constantFrom(
        'status',
        'name',
        'webhook_url',
        'account_id',
        'external_user_id',
        'metadata',
        'applicant',
        'rejection_reasons',
        'expected_version',
        'grace_period_seconds',
        'delivery_status',
        '__proto__',
        'constructor',
      ),
      fc.jsonValue({ maxDepth: 3 }),
    )
    .map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 60 }),
);

function send(
  t: TestApp,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: t.port,
        method,
        path,
        headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`${method} ${path} did not answer`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** The contract's error body, with the response's own request id; null when it is right. */
function contractErrorProblem(answer: Answer): string | null {
  let body: { error?: Record<string, unknown> };
  try {
    body = JSON.parse(answer.text) as typeof body;
  } catch {
    return `not JSON: ${answer.text.slice(0, 200)}`;
  }
  const error = body.error;
  if (!error || Object.keys(body).join() !== 'error') return `not an error body: ${answer.text.slice(0, 200)}`;
  if (Object.keys(error).sort().join() !== 'code,details,message,request_id')
    return `error keys: ${Object.keys(error).join()}`;
  if (typeof error.code !== 'string' || typeof error.message !== 'string' || !Array.isArray(error.details))
    return 'error field types';
  if (error.request_id !== answer.headers['x-request-id']) return 'request_id differs from x-request-id';
  return null;
}

function checkAnswer(route: string, answer: Answer): void {
  if (answer.status >= 500) throw new Error(`${route} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  if (answer.status >= 400) {
    const problem = contractErrorProblem(answer);
    if (problem) throw new Error(`${route} answered ${answer.status} without the contract body: ${problem}`);
  }
}

function rawExchange(
  port: number,
  write: (socket: Socket) => void,
  timeoutMs: number,
): Promise<{ response: string; closedAfterMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (data) => (response += data.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ response, closedAfterMs: Date.now() - started }));
    socket.setTimeout(timeoutMs, () => socket.destroy());
    socket.on('connect', () => write(socket));
  });
}

describe('hostile input', () => {
  let t: TestApp;
  let routes: Route[];

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_PER_MINUTE: '0', HTTP_REQUEST_TIMEOUT_MS: '2000' });
    const account = await createAccount(t, { webhook_url: null });
    const target = await createAccount(t, { webhook_url: null });
    const verification = await createVerification(t, account.id);
    const event = await t.http
      .post('/api/v1/public/kyc/webhook-events/test')
      .set('authorization', `Bearer ${account.secret}`)
      .send({ status: 'approved' });
    expect(event.status).toBe(202);
    const client = `Bearer ${account.secret}`;
    const internal = `Bearer ${t.internalToken}`;
    const admin = `Bearer ${t.adminToken}`;
    const basic = `Basic ${Buffer.from(`admin:${t.adminToken}`).toString('base64')}`;
    routes = [
      { method: 'GET', path: '/api/v1/public/kyc/verifications', auth: client },
      { method: 'GET', path: `/api/v1/public/kyc/verifications/${verification.id}`, auth: client },
      { method: 'GET', path: '/api/v1/public/kyc/webhook-events', auth: client },
      { method: 'GET', path: `/api/v1/public/kyc/webhook-events/${event.body.id}`, auth: client },
      { method: 'POST', path: `/api/v1/public/kyc/webhook-events/${event.body.id}/redeliver`, auth: client },
      { method: 'POST', path: '/api/v1/public/kyc/webhook-events/redeliver', auth: client },
      { method: 'POST', path: '/api/v1/public/kyc/webhook-events/test', auth: client },
      { method: 'POST', path: '/api/v1/internal/kyc/verifications', auth: internal },
      { method: 'POST', path: `/api/v1/internal/kyc/verifications/${verification.id}/transitions`, auth: internal },
      { method: 'POST', path: '/api/v1/admin/accounts', auth: admin },
      { method: 'GET', path: `/api/v1/admin/accounts/${target.id}`, auth: admin },
      { method: 'PATCH', path: `/api/v1/admin/accounts/${target.id}`, auth: admin },
      { method: 'POST', path: `/api/v1/admin/accounts/${target.id}/secret/rotate`, auth: admin },
      { method: 'GET', path: '/health/live', auth: '' },
      { method: 'GET', path: '/health/ready', auth: '' },
      { method: 'GET', path: '/metrics', auth: '' },
      { method: 'GET', path: '/admin/queues', auth: basic },
    ];
  });

  afterAll(async () => {
    await t.close();
  });

  it('never answers 5xx to arbitrary query strings and JSON bodies on any route, and every 4xx has the contract body', async () => {
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(
          anyQuery,
          fc.option(anyBody, { nil: undefined }),
          fc.boolean(),
          async (query, body, authorised) => {
            const headers: Record<string, string> = authorised && route.auth ? { authorization: route.auth } : {};
            const payload = route.method === 'GET' ? undefined : body;
            if (payload !== undefined) headers['content-type'] = 'application/json';
            const answer = await send(t, route.method, `${route.path}?${query}`, headers, payload);
            checkAnswer(`${route.method} ${route.path}?${query} ${payload ?? ''}`, answer);
          },
        ),
        { numRuns: 80 },
      );
    }
  }, 180_000);

  it('answers huge and odd header values with the contract body, never a 5xx', async () => {
    const list = '/api/v1/public/kyc/verifications';
    const cases: Array<[string, Record<string, string>]> = [
      ['a 15 KB request id', { 'x-request-id': 'a'.repeat(15_000) }],
      ['a 10 KB bearer token', { authorization: `Bearer ${'t'.repeat(10_000)}` }],
      ['an empty authorization', { authorization: '' }],
      ['a scheme without a token', { authorization: 'Bearer' }],
      ['three bearer words', { authorization: 'Bearer a b' }],
      ['an odd content-type', { 'content-type': 'application/json; charset=ebcdic; boundary=""' }],
      ['an accept of nonsense', { accept: '*/*;q=abc, text/\u0001' }],
      [
        'a thousand-element forwarded-for',
        { 'x-forwarded-for': Array.from({ length: 1_000 }, (_, i) => `10.0.${i % 256}.1`).join(', ') },
      ],
    ];
    for (const [name, headers] of cases) {
      const answer = await send(t, 'GET', list, headers).catch(
        (error: Error) => ({ status: -1, headers: {}, text: error.message }) as Answer,
      );
      if (answer.status === -1 && /Invalid character/.test(answer.text)) continue; // the client refused to send it
      checkAnswer(name, answer);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(String(answer.headers['x-request-id'])).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    }

    // Over Node's 16 KB header limit, and raw latin-1 bytes a normal client would not send.
    const huge = await rawExchange(
      t.port,
      (s) => s.end(`GET ${list} HTTP/1.1\r\nHost: x\r\nCookie: ${'c'.repeat(70_000)}\r\n\r\n`),
      10_000,
    );
    expect(huge.response).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(huge.response.split('\r\n\r\n')[1]).error.code).toBe('payload_too_large');
    const odd = await rawExchange(
      t.port,
      (s) =>
        s.end(
          Buffer.from(
            `GET ${list} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer \xff\xfe\x80\r\n\r\n`,
            'latin1',
          ),
        ),
      10_000,
    );
    expect(odd.response).toMatch(/^HTTP\/1\.1 401 /);
    const garbage = await rawExchange(t.port, (s) => s.end('NOT HTTP AT ALL\r\n\r\n'), 10_000);
    expect(garbage.response).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(garbage.response.split('\r\n\r\n')[1]).error.code).toBe('validation_failed');
  });

  it('times out slow-loris bodies and headers with 408 while still serving everyone else', async () => {
    const slow = (kind: 'body' | 'headers'): Promise<{ response: string; closedAfterMs: number }> =>
      rawExchange(
        t.port,
        (socket) => {
          const head = `POST /api/v1/internal/kyc/verifications HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.internalToken}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n`;
          let written = 0;
          socket.write(kind === 'body' ? `${head}\r\n{` : head);
          const drip = setInterval(() => {
            if (socket.destroyed || written > 200) return clearInterval(drip);
            written += 1;
            socket.write(kind === 'body' ? ' ' : `X-Slow-${written}: 1\r\n`);
          }, 300);
          socket.on('close', () => clearInterval(drip));
        },
        30_000,
      );
    const loris = [
      ...Array.from({ length: 60 }, () => slow('body')),
      ...Array.from({ length: 60 }, () => slow('headers')),
    ];

    // While 120 slow clients hold connections, ordinary requests are served.
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (let i = 0; i < 5; i += 1) {
      const live = await send(t, 'GET', '/health/live', {});
      expect(live.status).toBe(200);
      const v = await send(
        t,
        'POST',
        '/api/v1/internal/kyc/verifications',
        { authorization: `Bearer ${t.internalToken}`, 'content-type': 'application/json' },
        JSON.stringify({ account_id: '00000000-0000-7000-8000-000000000000', external_user_id: 'x' }),
      );
      expect(v.status).toBe(404);
    }

    const results = await Promise.all(loris);
    // Closed by the server (the client's own give-up is 30 s), each with a 408 in the contract's shape.
    expect(results.filter((r) => r.closedAfterMs >= 29_000)).toEqual([]);
    for (const r of results) {
      expect(r.response).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(r.response.split('\r\n\r\n')[1]).error.code).toBe('request_timeout');
    }
    expect((await send(t, 'GET', '/health/live', {})).status).toBe(200);
  }, 60_000);
});
