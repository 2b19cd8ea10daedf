import { dashboardActionOf } from 'src/ops/dashboard-actions';

describe('dashboardActionOf', () => {
  it.each([
    ['PUT', '/api/queues/webhooks/pause', 'dashboard.queue_paused', 'queue', 'webhooks'],
    ['PUT', '/api/queues/webhooks/resume', 'dashboard.queue_resumed', 'queue', 'webhooks'],
    ['PUT', '/api/queues/webhooks/retry/failed', 'dashboard.jobs_retried', 'queue', 'webhooks'],
    ['PUT', '/api/queues/webhooks/clean/completed', 'dashboard.queue_cleaned', 'queue', 'webhooks'],
    ['PUT', '/api/queues/webhooks/promote', 'dashboard.jobs_promoted', 'queue', 'webhooks'],
    ['PUT', '/api/queues/webhooks/42/retry', 'dashboard.job_retried', 'job', '42'],
    ['PUT', '/api/queues/webhooks/42/promote', 'dashboard.job_promoted', 'job', '42'],
    ['PUT', '/api/queues/webhooks/42/clean', 'dashboard.job_removed', 'job', '42'],
    ['PUT', '/api/queues/pause', 'dashboard.queues_paused', 'queues', 'all'],
  ])('%s %s is %s', (method, path, action, type, id) => {
    expect(dashboardActionOf(method, path)).toEqual({ action, target: { type, id } });
  });

  it('reads are not actions', () => {
    expect(dashboardActionOf('GET', '/api/queues/webhooks/42')).toBeNull();
    expect(dashboardActionOf('PUT', '/static/x.js')).toBeNull();
  });
});
