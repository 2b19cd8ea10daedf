import { TestApp, startApp } from './helpers/test-app';

describe('HTTP hardening', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('does not announce the framework and sets helmet headers', async () => {
    const res = await t.http.get('/health/live');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBeDefined();
  });

  it('sends no CORS headers, not even to a preflight', async () => {
    const simple = await t.http.get('/health/live').set('origin', 'https://evil.example');
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.http
      .options('/api/v1/public/kyc/verifications')
      .set('origin', 'https://evil.example')
      .set('access-control-request-method', 'GET');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
  });
});
