import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Redis from 'ioredis';
import { load } from 'js-yaml';
import { createAccount, createVerificationInStatus } from './helpers/factories';
import { OwnRedis, TcpProxy, databaseServer, startOwnRedis, startTcpProxy } from './helpers/ops-infra';
import { metricValue, waitFor } from './helpers/poll';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const ROOT = join(__dirname, '..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const LIST = '/api/v1/public/kyc/verifications';

/** The series every role serves for the alert rules, as /metrics writes them with nothing wrong. */
const ALERT_SERIES_AT_REST: [name: string, labels: string, value: number][] = [
  ['kyc_dependency_up', 'dependency="postgres"', 1],
  ['kyc_dependency_up', 'dependency="redis"', 1],
  ['kyc_build_info', `version="${VERSION}",node_version="${process.version}"`, 1],
  ['rate_limit_memory_fallback', '', 0],
  // Counters, exported at 0 from the start so that increase() sees their first event.
  ['webhook_events_failed_total', 'reason="schedule_exhausted"', 0],
  ['webhook_events_failed_total', 'reason="no_webhook_url"', 0],
  ['webhook_endpoint_disables_total', 'reason="gone"', 0],
  ['webhook_endpoint_disables_total', 'reason="failing"', 0],
  ['webhook_endpoint_disables_total', 'reason="client"', 0],
  ['webhook_endpoint_disables_total', 'reason="operator"', 0],
];

/** The metric names deploy/prometheus/alerts.yml reads (label names, functions and keywords left out). */
function metricsTheAlertsUse(): string[] {
  const file = load(readFileSync(join(ROOT, 'deploy', 'prometheus', 'alerts.yml'), 'utf8')) as {
    groups: { rules: { expr: string }[] }[];
  };
  const names = new Set<string>();
  for (const { expr } of file.groups.flatMap((group) => group.rules)) {
    const bare = expr
      .replace(/\{[^}]*\}/g, ' ')
      .replace(/\b(by|without)\s*\([^)]*\)/g, ' ')
      .replace(/\[[^\]]*\]/g, ' ');
    for (const [, name] of bare.matchAll(/\b([a-z_][a-z0-9_]*)\b(?!\s*\()/g)) {
      if (!['and', 'or', 'unless', 'bool', 'offset'].includes(name)) names.add(name);
    }
  }
  return [...names].sort();
}

async function metrics(t: TestApp): Promise<string> {
  const res = await t.http.get('/metrics');
  expect(res.status).toBe(200);
  return res.text;
}

/** /metrics once the sample of `name` `labels` passes `done` (gauges refresh every OUTBOX_SWEEP_INTERVAL_MS). */
async function metricReads(
  t: TestApp,
  name: string,
  labels: string,
  done: (value: number) => boolean,
): Promise<string> {
  let text = '';
  await waitFor(
    async () => {
      text = await metrics(t);
      // NaN (shown as null) while the series is not served at all.
      return text.includes(`\n${name}${labels ? `{${labels}}` : ''} `) ? metricValue(text, name, labels) : NaN;
    },
    (value) => !Number.isNaN(value) && done(value),
    `${name}{${labels}}`,
  );
  return text;
}

/**
 * Every series of ALERT_SERIES_AT_REST is served, and every metric the alert rules read; the gauges
 * at rest, the counters too with `countersAtZero` (in a process that cannot have counted anything).
 * No series is labelled by account or carries an id.
 */
async function expectAlertSeries(t: TestApp, { countersAtZero }: { countersAtZero: boolean }): Promise<void> {
  const text = await metricReads(t, 'kyc_dependency_up', 'dependency="redis"', (value) => value === 1);
  for (const [name, labels, value] of ALERT_SERIES_AT_REST) {
    const line = text.split('\n').find((row) => row.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
    expect({ name, labels, served: line !== undefined }).toEqual({ name, labels, served: true });
    if (countersAtZero || !name.endsWith('_total')) {
      expect({ name, labels, value: metricValue(text, name, labels) }).toEqual({ name, labels, value });
    }
  }
  for (const name of [
    'webhook_outbox_oldest_due_seconds',
    'webhook_outbox_backlog',
    'webhook_outbox_waiting',
    'webhook_queue_jobs',
  ]) {
    expect(text).toContain(`# TYPE ${name} gauge`);
  }
  for (const name of metricsTheAlertsUse()) {
    expect({ name, served: text.includes(`\n${name}`) }).toEqual({ name, served: true });
  }
  // No label names an account, and no label value is an id.
  const samples = text.split('\n').filter((row) => !row.startsWith('#'));
  expect(samples.filter((row) => /[{,][a-z_]*account[a-z_]*="/.test(row))).toEqual([]);
  expect(samples.filter((row) => /="[0-9a-f]{8}-[0-9a-f]{4}-/.test(row))).toEqual([]);
}

describe('GET /metrics', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({ WEBHOOK_RETRY_SCHEDULE: '100ms', OUTBOX_SWEEP_INTERVAL_MS: '200' });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('serves Prometheus text without auth: HTTP latency by route template and status, delivery and process metrics', async () => {
    const account = await createAccount(t);
    await t.http.get(LIST).set('authorization', `Bearer ${account.secret}`);
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

  it("labels Swagger UI's assets with their mount, /api/docs, not unmatched", async () => {
    const before = await metrics(t);
    const count = (text: string, route: string): number =>
      metricValue(text, 'http_request_duration_seconds_count', `method="GET",route="${route}",status="200"`);
    for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js']) {
      expect((await t.http.get(`/api/docs/${asset}`)).status).toBe(200);
    }
    const after = await metrics(t);
    expect(count(after, '/api/docs') - count(before, '/api/docs')).toBe(2);
    expect(count(after, 'unmatched')).toBe(count(before, 'unmatched'));
    expect(after).not.toContain('swagger-ui-bundle');
  });

  it('serves every series the alert rules use: dependencies up, build info, failures by reason', async () => {
    await expectAlertSeries(t, { countersAtZero: false });
  });

  it('counts delivery cycles the worker ends failed, by reason: the schedule used up, no webhook_url', async () => {
    const read = async (reason: string): Promise<number> =>
      metricValue(await metrics(t), 'webhook_events_failed_total', `reason="${reason}"`);
    const before = { exhausted: await read('schedule_exhausted'), noUrl: await read('no_webhook_url') };
    receiver.respondWith({ status: 500 });
    const failing = await createAccount(t, { webhook_url: receiver.url });
    const v = await createVerificationInStatus(t, failing.id, 'processing');
    // Two attempts (WEBHOOK_RETRY_SCHEDULE=100ms), then the event is failed.
    await waitFor(
      () => read('schedule_exhausted'),
      (value) => value === before.exhausted + 1,
      'webhook_events_failed_total{reason="schedule_exhausted"}',
    );
    expect(receiver.requests.filter((r) => JSON.parse(r.body).data.verification.id === v.id)).toHaveLength(2);

    // No webhook_url: the event is failed from its creation; the worker fails its job.
    const noUrl = await createAccount(t);
    await createVerificationInStatus(t, noUrl.id, 'processing');
    await waitFor(
      () => read('no_webhook_url'),
      (value) => value === before.noUrl + 1,
      'webhook_events_failed_total{reason="no_webhook_url"}',
    );
    expect(await read('schedule_exhausted')).toBe(before.exhausted + 1);
  });
});

describe('GET /metrics of an APP_ROLE=api process (no worker), its Redis and PostgreSQL taken away', () => {
  let redis: OwnRedis;
  let proxy: TcpProxy;
  let t: TestApp;
  beforeAll(async () => {
    redis = await startOwnRedis();
    proxy = await startTcpProxy(databaseServer().port, databaseServer().host);
    const url = new URL(process.env.DATABASE_URL as string);
    url.port = String(proxy.port);
    t = await startApp({
      APP_ROLE: 'api',
      REDIS_URL: redis.url,
      DATABASE_URL: url.toString(),
      OUTBOX_SWEEP_INTERVAL_MS: '200',
    });
  });
  afterAll(async () => {
    await t.close();
    await proxy.close();
    await redis.stop();
  });

  it('serves every series the alert rules use, each at rest, its counters at 0', async () => {
    await expectAlertSeries(t, { countersAtZero: true });
  });

  it('reads a hung or stopped Redis as down within seconds, and up again once it answers; the rate limiter meanwhile counts in memory', async () => {
    const account = await createAccount(t);
    const list = (): Promise<unknown> => t.http.get(LIST).set('authorization', `Bearer ${account.secret}`);
    await metricReads(t, 'kyc_dependency_up', 'dependency="redis"', (value) => value === 1);

    // Hung: every command waits (CLIENT PAUSE), none fails.
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 0 });
    try {
      await admin.call('CLIENT', 'PAUSE', '4000', 'ALL');
      const paused = Date.now();
      await metricReads(t, 'kyc_dependency_up', 'dependency="redis"', (value) => value === 0);
      expect(Date.now() - paused).toBeLessThan(4_000);
      await list();
      expect(metricValue(await metrics(t), 'rate_limit_memory_fallback')).toBe(1);
      expect(metricValue(await metrics(t), 'kyc_dependency_up', 'dependency="postgres"')).toBe(1);
    } finally {
      admin.disconnect();
    }
    await metricReads(t, 'kyc_dependency_up', 'dependency="redis"', (value) => value === 1);
    await list();
    expect(metricValue(await metrics(t), 'rate_limit_memory_fallback')).toBe(0);

    // Stopped.
    await redis.stop();
    await metricReads(t, 'kyc_dependency_up', 'dependency="redis"', (value) => value === 0);
    await list();
    expect(metricValue(await metrics(t), 'rate_limit_memory_fallback')).toBe(1);
    redis = await startOwnRedis(redis.port);
    await metricReads(t, 'kyc_dependency_up', 'dependency="redis"', (value) => value === 1);
    await waitFor(
      async () => (await list(), metricValue(await metrics(t), 'rate_limit_memory_fallback')),
      (value) => value === 0,
      'rate_limit_memory_fallback 0',
    );
  });

  it('reads PostgreSQL gone as down, and up again once it is back', async () => {
    await metricReads(t, 'kyc_dependency_up', 'dependency="postgres"', (value) => value === 1);
    await proxy.cut();
    try {
      await metricReads(t, 'kyc_dependency_up', 'dependency="postgres"', (value) => value === 0);
    } finally {
      await proxy.restore();
    }
    await metricReads(t, 'kyc_dependency_up', 'dependency="postgres"', (value) => value === 1);
  });

  it('reports how long the oldest due pending event has waited, 0 when none is due', async () => {
    const account = await createAccount(t, { webhook_url: 'http://127.0.0.1:9/hook' });
    const v = await createVerificationInStatus(t, account.id, 'processing');
    // No worker runs in this process: the event stays pending. Make it due for a day, longer than
    // any other event of the run can have been.
    const { rows } = await t.db.query<{ id: string }>(
      `UPDATE webhook_events SET next_attempt_at = now() - interval '1 day'
        WHERE verification_id = $1 AND delivery_status = 'pending' RETURNING id`,
      [v.id],
    );
    expect(rows).toHaveLength(1);
    try {
      const text = await metricReads(t, 'webhook_outbox_oldest_due_seconds', '', (value) => value >= 86_400);
      expect(metricValue(text, 'webhook_outbox_oldest_due_seconds')).toBeLessThan(86_400 + 120);
      expect(metricValue(text, 'webhook_outbox_backlog')).toBeGreaterThanOrEqual(1);
    } finally {
      // Nothing left for the workers of later specs to deliver.
      await t.db.query('DELETE FROM webhook_events WHERE id = $1', [rows[0].id]);
    }
    await metricReads(t, 'webhook_outbox_oldest_due_seconds', '', (value) => value < 86_400);
  });
});

describe('GET /metrics of an APP_ROLE=worker process', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ APP_ROLE: 'worker', OUTBOX_SWEEP_INTERVAL_MS: '200' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves every series the alert rules use, each gauge at rest', async () => {
    // Its sweeper may pick up what earlier specs left pending: its counters are not checked at 0.
    await expectAlertSeries(t, { countersAtZero: false });
  });
});
