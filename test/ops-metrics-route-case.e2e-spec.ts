import { type TestApp, startApp } from './helpers/test-app';

/**
 * Express matches mounts regardless of letter case, so the dashboard answers /ADMIN/Queues as
 * /admin/queues: its route label must not keep the request's case (2^11 series per route otherwise).
 */
describe('http metrics: the route label of a mount is lower-cased', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startApp({ LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await t?.close();
  });

  it('counts the dashboard reached through mixed-case paths in one series', async () => {
    const credentials = Buffer.from(`admin:${t.adminToken}`).toString('base64');
    const paths = ['/admin/queues/api/queues', '/ADMIN/Queues/api/queues', '/Admin/QUEUES/api/queues'];
    for (const path of paths) {
      const res = await fetch(`${t.url}${path}`, { headers: { authorization: `Basic ${credentials}` } });
      expect(`${path} ${res.status}`).toBe(`${path} 200`);
    }
    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    const routes = new Set(
      metrics
        .split('\n')
        .filter((line) => line.startsWith('http_request_duration_seconds_count{') && /queues/i.test(line))
        .map((line) => /route="([^"]*)"/.exec(line)?.[1]),
    );
    expect([...routes]).toEqual(['/admin/queues/api/queues']);
  });
});
