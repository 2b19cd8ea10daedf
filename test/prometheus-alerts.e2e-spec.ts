/**
 * The shipped alert rules (deploy/prometheus/alerts.yml) and Grafana dashboard
 * (deploy/grafana/kyc-delivery.json) against a real Prometheus scraping a running service: the
 * conditions each alert is about are driven for real, and every panel query is evaluated.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { inCi } from './helpers/chromium';
import { createAccount, createVerification, createVerificationInStatus, transition } from './helpers/factories';
import { waitFor } from './helpers/poll';
import {
  PROMETHEUS_MISSING,
  PrometheusAlert,
  PrometheusServer,
  compressRules,
  findPrometheus,
} from './helpers/prometheus';
import { PROMTOOL_MISSING, findPromtool } from './helpers/promtool';
import { RedisServer } from './helpers/redis-server';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const DEPLOY = join(__dirname, '..', 'deploy');
const PROMETHEUS_YML = join(DEPLOY, 'prometheus', 'prometheus.yml');
const ALERTS_YML = join(DEPLOY, 'prometheus', 'alerts.yml');
const DASHBOARD_JSON = join(DEPLOY, 'grafana', 'kyc-delivery.json');

/** `for:` in the test copy: two evaluations at 1 s, so "pending, then firing" is still exercised. */
const FOR = '1s';
/** Ranges longer than this ([10m], [5m]) are cut to it, so increase-based alerts clear within the test. */
const MAX_RANGE = '15s';
/** What Grafana would put for $__rate_interval at this scrape interval and a short time range. */
const RATE_INTERVAL = '30s';

const REQUIRED_ALERTS = [
  'KycServiceNotReady',
  'KycWebhookDeliveriesDead',
  'KycWebhookEndpointDisabled',
  'KycWebhookBacklogStale',
  'KycApiErrors',
  'KycApiLatency',
  'KycBreakGlassUsed',
];

const prometheusBinary = findPrometheus();

if (!prometheusBinary && !inCi()) {
  console.warn(`\n!!! The real-Prometheus alert and dashboard test did NOT run (skipped): ${PROMETHEUS_MISSING} !!!\n`);
}

interface ScrapeConfig {
  job_name: string;
  metrics_path?: string;
  static_configs: Array<{ targets: string[]; labels?: Record<string, string> }>;
}

/** The shipped prometheus.yml, pointed at the test's service, with 1 s scrapes and evaluations. */
function testPrometheusConfig(target: string): string {
  const shipped = load(readFileSync(PROMETHEUS_YML, 'utf8')) as { scrape_configs: ScrapeConfig[] };
  return dump({
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: ['alerts.yml'],
    scrape_configs: shipped.scrape_configs.map((job) => ({
      ...job,
      static_configs: [{ targets: [target], labels: { role: 'all' } }],
    })),
  });
}

interface DashboardPanel {
  title: string;
  type: string;
  targets?: Array<{ refId: string; expr: string }>;
  panels?: DashboardPanel[];
}
interface DashboardVariable {
  name: string;
  type: string;
  includeAll?: boolean;
  allValue?: string;
  definition?: string;
}
interface Dashboard {
  panels: DashboardPanel[];
  templating: { list: DashboardVariable[] };
}

function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_JSON, 'utf8')) as Dashboard;
}

/** Every query of every panel (rows' nested panels included), named for the failure message. */
function panelQueries(dashboard: Dashboard): Array<{ name: string; expr: string }> {
  const all = (panels: DashboardPanel[]): DashboardPanel[] => panels.flatMap((p) => [p, ...all(p.panels ?? [])]);
  return all(dashboard.panels).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ name: `${panel.title} [${target.refId}]`, expr: target.expr })),
  );
}

/** What Grafana sends: built-in intervals filled in, query variables at their "All" value. */
function resolveVariables(expr: string, dashboard: Dashboard): string {
  const values: Record<string, string> = { __rate_interval: RATE_INTERVAL, __interval: '15s', __range: '1h' };
  for (const variable of dashboard.templating.list) {
    if (variable.type === 'query' && variable.includeAll && variable.allValue)
      values[variable.name] = variable.allValue;
  }
  const resolved = expr.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, braced?: string, bare?: string) => {
    const value = values[(braced ?? bare) as string];
    if (value === undefined) throw new Error(`unknown dashboard variable ${whole} in ${expr}`);
    return value;
  });
  return resolved;
}

(prometheusBinary || inCi() ? describe : describe.skip)('alerts and dashboard against a real Prometheus', () => {
  let redis: RedisServer;
  let t: TestApp;
  let prometheus: PrometheusServer;
  let testAlerts: string[];
  /** Answers 200, 500 (every attempt: the event dies) and 410 (the endpoint is gone). */
  let ok: WebhookReceiver;
  let dead: WebhookReceiver;
  let gone: WebhookReceiver;

  beforeAll(async () => {
    if (!prometheusBinary) throw new Error(`CI must run the real-Prometheus test: ${PROMETHEUS_MISSING}`);
    redis = await RedisServer.reserve();
    await redis.start();
    ok = await WebhookReceiver.start('/ok');
    dead = await WebhookReceiver.start('/dead');
    dead.respondWith({ status: 500 });
    gone = await WebhookReceiver.start('/gone');
    gone.respondWith({ status: 410 });
    t = await startApp({
      REDIS_URL: redis.url,
      // Two attempts 200 ms apart, then the event is dead.
      WEBHOOK_RETRY_SCHEDULE: '200ms',
      // The gauges (backlog, oldest due, disabled endpoints, queue) refresh at this interval.
      OUTBOX_SWEEP_INTERVAL_MS: '500',
      // Never disabled for failing: a dead delivery must not also disable its endpoint, so each
      // alert below is caused by its own condition only (the 410 disables).
      WEBHOOK_DISABLE_AFTER: '0',
    });
    const rules = compressRules(readFileSync(ALERTS_YML, 'utf8'), FOR, MAX_RANGE);
    testAlerts = rules.alerts;
    prometheus = await PrometheusServer.start(prometheusBinary, {
      'prometheus.yml': testPrometheusConfig(`127.0.0.1:${t.port}`),
      'alerts.yml': rules.yaml,
    });

    // Traffic every panel needs: API requests, deliveries that succeed, a redaction.
    const account = await createAccount(t, { webhook_url: ok.url });
    const approved = await createVerificationInStatus(t, account.id, 'approved');
    const redacted = await t.http
      .post(`/api/v1/public/kyc/verifications/${approved.id}/redact`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(redacted.status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const list = await t.http
        .get('/api/v1/public/kyc/verifications')
        .set('authorization', `Bearer ${account.secret}`);
      expect(list.status).toBe(200);
    }
    // processing, approved, redacted.
    await ok.waitFor((requests) => requests.length >= 3, 20_000, 'the three deliveries of the happy account');
  }, 60_000);

  afterAll(async () => {
    const closed = await Promise.allSettled([
      prometheus?.stop(),
      t?.close(),
      ok?.close(),
      dead?.close(),
      gone?.close(),
    ]);
    await redis?.stop();
    const failure = closed.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
  });

  it('promtool accepts the shipped prometheus.yml and the rule files it names', () => {
    const promtool = findPromtool();
    if (!promtool) throw new Error(PROMTOOL_MISSING);
    const result = spawnSync(promtool, ['check', 'config', PROMETHEUS_YML], { encoding: 'utf8' });
    expect({ status: result.status, output: result.stdout + result.stderr }).toMatchObject({ status: 0 });
  });

  it('answers every panel query of the Grafana dashboard with series while the service runs', async () => {
    const dashboard = readDashboard();
    const queries = panelQueries(dashboard);
    expect(queries.length).toBeGreaterThan(10);
    // The `job` variable's values (label_values(<metric>, job)) name the service's job.
    for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
      const [, metric, label] = /^label_values\((\w+),\s*(\w+)\)$/.exec(variable.definition ?? '') ?? [];
      expect({ variable: variable.name, metric, label }).toEqual({
        variable: variable.name,
        metric: expect.any(String),
        label: expect.any(String),
      });
      queries.push({ name: `variable ${variable.name}`, expr: `count by (${label}) (${metric})` });
    }
    // A query that Prometheus rejects fails at once; one without series gets until the deadline,
    // as a rate needs two scrapes inside its window.
    const deadline = Date.now() + 15_000;
    const failures: Array<{ name: string; expr: string; problem: string }> = [];
    for (const { name, expr } of queries) {
      const resolved = resolveVariables(expr, dashboard);
      for (;;) {
        const answer = await prometheus.query(resolved);
        if (answer.status !== 'success') {
          failures.push({ name, expr: resolved, problem: `rejected: ${answer.errorType}: ${answer.error}` });
          break;
        }
        if ((answer.data?.result.length ?? 0) > 0) break;
        if (Date.now() > deadline) {
          failures.push({ name, expr: resolved, problem: 'no series' });
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    expect(failures).toEqual([]);
  });

  it('fires the dead-delivery, endpoint-disabled, not-ready and rate-limit-fallback alerts from their conditions only, and clears them', async () => {
    expect(testAlerts).toEqual(expect.arrayContaining(REQUIRED_ALERTS));
    const everFiring = new Set<string>();
    const timings: string[] = [];
    const alerts = async (): Promise<PrometheusAlert[]> => {
      const list = await prometheus.alerts();
      for (const alert of list) if (alert.state === 'firing') everFiring.add(alert.labels.alertname);
      return list;
    };
    const active = (list: PrometheusAlert[], name: string, state?: 'firing'): PrometheusAlert[] =>
      list.filter((alert) => alert.labels.alertname === name && (!state || alert.state === state));
    const untilFiring = async (name: string, since: number, timeoutMs = 15_000): Promise<PrometheusAlert[]> => {
      const list = await waitFor(alerts, (l) => active(l, name, 'firing').length > 0, `${name} firing`, timeoutMs);
      timings.push(`${name} firing ${((Date.now() - since) / 1000).toFixed(1)} s after its condition`);
      return list;
    };
    const untilCleared = async (name: string, since: number, timeoutMs = 30_000): Promise<void> => {
      await waitFor(alerts, (l) => active(l, name).length === 0, `${name} cleared`, timeoutMs);
      timings.push(`${name} cleared ${((Date.now() - since) / 1000).toFixed(1)} s after its condition ended`);
    };

    // Prometheus has scraped the service (so the failure counters' zeros are stored) and nothing fires.
    await waitFor(
      () => prometheus.query('up{job="kyc"} == 1'),
      (answer) => (answer.data?.result.length ?? 0) > 0,
      'a first scrape of the service',
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await alerts()).map((alert) => alert.labels.alertname)).toEqual([]);

    // A dead delivery: the endpoint answers 500 to both attempts of the schedule.
    const deadAccount = await createAccount(t, { webhook_url: dead.url });
    const deadVerification = await createVerification(t, deadAccount.id);
    await transition(t, deadVerification.id, { status: 'processing' });
    await dead.waitFor((requests) => requests.length >= 2, 10_000, 'both attempts of the dead delivery');
    const deadAt = Date.now();
    let list = await untilFiring('KycWebhookDeliveriesDead', deadAt);
    expect(active(list, 'KycWebhookEndpointDisabled')).toEqual([]);

    // A 410: the endpoint is disabled at once (reason gone).
    const goneAccount = await createAccount(t, { webhook_url: gone.url });
    const goneVerification = await createVerification(t, goneAccount.id);
    await transition(t, goneVerification.id, { status: 'processing' });
    await gone.waitFor((requests) => requests.length >= 1, 10_000, 'the 410 attempt');
    const goneAt = Date.now();
    list = await untilFiring('KycWebhookEndpointDisabled', goneAt);
    expect(active(list, 'KycWebhookEndpointDisabled', 'firing')[0].labels).toMatchObject({ reason: 'gone' });

    // Redis down: the service is not ready, and its rate limits count in memory, until it is back
    // (on the same port).
    expect(active(list, 'KycServiceNotReady')).toEqual([]);
    await redis.stop();
    const redisDownAt = Date.now();
    list = await untilFiring('KycServiceNotReady', redisDownAt);
    expect(active(list, 'KycServiceNotReady', 'firing').map((alert) => alert.labels.dependency)).toEqual(['redis']);
    await untilFiring('KycRateLimitMemoryFallback', redisDownAt);
    await redis.start();
    const redisUpAt = Date.now();
    await untilCleared('KycServiceNotReady', redisUpAt);
    await untilCleared('KycRateLimitMemoryFallback', redisUpAt);

    // The increase-based alerts clear once their (shortened) window has passed the event.
    await untilCleared('KycWebhookDeliveriesDead', deadAt);
    await untilCleared('KycWebhookEndpointDisabled', goneAt);
    // The accounts above were made with ADMIN_TOKEN: break-glass uses, which fire KycBreakGlassUsed.
    expect([...everFiring].sort()).toEqual([
      'KycBreakGlassUsed',
      'KycRateLimitMemoryFallback',
      'KycServiceNotReady',
      'KycWebhookDeliveriesDead',
      'KycWebhookEndpointDisabled',
    ]);
    console.log(`real-Prometheus alerts (for: ${FOR}, ranges cut to ${MAX_RANGE}):\n  ${timings.join('\n  ')}`);
  }, 90_000);
});
