import { TestApp, startApp } from './helpers/test-app';

const VALID_ID = /^[A-Za-z0-9._-]{1,128}$/;

describe('x-request-id on every response', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const cases: [
    string,
    (
      id: string,
    ) => Promise<{ status: number; headers: Record<string, string>; body: { error?: { request_id: string } } }>,
    number,
  ][] = [
    ['200 health', (id) => t.http.get('/health/live').set('x-request-id', id), 200],
    ['404 unknown route', (id) => t.http.get('/no/such/route').set('x-request-id', id), 404],
    [
      '405 known route, other method',
      (id) => t.http.delete('/api/v1/internal/kyc/verifications').set('x-request-id', id),
      405,
    ],
    [
      '401 public API without credentials',
      (id) => t.http.get('/api/v1/public/kyc/verifications').set('x-request-id', id),
      401,
    ],
    [
      '413 body over 100 KB',
      (id) =>
        t.http
          .post('/api/v1/internal/kyc/verifications')
          .set('x-request-id', id)
          .set('authorization', `Bearer ${t.internalToken}`)
          .set('content-type', 'application/json')
          .send(JSON.stringify({ external_user_id: 'x'.repeat(110_000) })),
      413,
    ],
    [
      '415 body that is not JSON',
      (id) =>
        t.http
          .post('/api/v1/internal/kyc/verifications')
          .set('x-request-id', id)
          .set('authorization', `Bearer ${t.internalToken}`)
          .set('content-type', 'text/plain')
          .send('hello'),
      415,
    ],
    [
      '400 repeated query parameter',
      (id) => t.http.get('/api/v1/public/kyc/verifications?limit=1&limit=2').set('x-request-id', id),
      400,
    ],
  ];

  it.each(cases)('echoes a well-formed caller id on %s', async (_name, send, status) => {
    const id = `client.req-${status}_${'a'.repeat(100)}`;
    const res = await send(id);
    expect(res.status).toBe(status);
    expect(res.headers['x-request-id']).toBe(id);
    if (status >= 400) expect(res.body.error?.request_id).toBe(id);
  });

  it.each(cases)('replaces a malformed caller id on %s', async (_name, send, status) => {
    for (const bad of ['x'.repeat(129), 'has space', 'semi;colon', 'ünicode']) {
      const res = await send(bad);
      expect(res.status).toBe(status);
      const id = res.headers['x-request-id'];
      expect(id).toMatch(VALID_ID);
      expect(id).not.toBe(bad);
      if (status >= 400) expect(res.body.error?.request_id).toBe(id);
    }
  });

  it('makes a new id when none is given, different each time', async () => {
    const a = await t.http.get('/health/live');
    const b = await t.http.get('/health/live');
    expect(a.headers['x-request-id']).toMatch(VALID_ID);
    expect(b.headers['x-request-id']).toMatch(VALID_ID);
    expect(a.headers['x-request-id']).not.toBe(b.headers['x-request-id']);
  });

  it('accepts the boundary lengths 1 and 128', async () => {
    for (const id of ['a', 'Z'.repeat(128)]) {
      const res = await t.http.get('/health/live').set('x-request-id', id);
      expect(res.headers['x-request-id']).toBe(id);
    }
  });
});
