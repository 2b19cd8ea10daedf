import { createAccount } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';

describe('GET /metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves Prometheus text without auth: HTTP latency by route template and status, delivery and process metrics', async () => {
    const account = await createAccount(t);
    await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${account.secret}`);
    await t.http
      .get('/api/v1/public/kyc/verifications/0193a6f2-0000-7000-8000-000000000000')
      .set('authorization', `Bearer ${account.secret}`);
    await t.http.get('/no/such/route/xyzzy');
    const res = await t.http.get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.text;
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/public\/kyc\/verifications",status="200"\} 1/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/public\/kyc\/verifications\/:id",status="404"\} 1/,
    );
    expect(text).toMatch(
      /http_request_duration_seconds_count\{method="POST",route="\/api\/v1\/admin\/accounts",status="201"\} 1/,
    );
    expect(text).toMatch(/route="unmatched",status="404"/);
    // A word, not digits: a number such as a heap size can contain any run of digits.
    expect(text).not.toContain('xyzzy');
    expect(text).not.toContain('0193a6f2-0000');
    for (const name of [
      'webhook_delivery_attempts_total',
      'webhook_delivery_latency_seconds',
      'webhook_queue_jobs',
      'webhook_outbox_backlog',
      'process_cpu_seconds_total',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(text).toContain(`# TYPE ${name}`);
    }
  });
});
