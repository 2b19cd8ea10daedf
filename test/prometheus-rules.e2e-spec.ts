/**
 * deploy/prometheus/alerts.yml, tested like code: promtool accepts it and its unit tests
 * (deploy/prometheus/alerts.test.yml) pass, and every alert carries what an operator needs — a
 * severity, a summary, a description, and a runbook_url at its own section of docs/operations.md.
 * Without promtool the promtool checks are skipped, except in CI, where they fail.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { inCi } from './helpers/chromium';
import { PROMTOOL_MISSING, findPromtool } from './helpers/promtool';

const ROOT = join(__dirname, '..');
const RULES = 'deploy/prometheus/alerts.yml';
const RULE_TESTS = 'deploy/prometheus/alerts.test.yml';
const RUNBOOK = 'docs/operations.md';
/** The docs base every runbook_url starts with, stated once in docs/operations.md. */
const RUNBOOK_BASE = 'https://github.com/kyc-delivery/kyc-delivery/blob/main/docs/operations.md';

/** The alerts the contract names ("Alerting", under Operations). */
const CONTRACT_ALERTS = [
  'KycServiceNotReady',
  'KycWebhookDeliveriesDead',
  'KycWebhookEndpointDisabled',
  'KycWebhookBacklogStale',
  'KycApiErrors',
  'KycApiLatency',
  'KycBreakGlassUsed',
];
/** Values read from the database or the queue, exported alike by every process: max, never sum. */
const GLOBAL_GAUGES = [
  'webhook_outbox_backlog',
  'webhook_outbox_waiting',
  'webhook_outbox_oldest_due_seconds',
  'webhook_queue_jobs',
  'webhook_endpoints_disabled',
];

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleTest {
  name: string;
  alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[];
}

const rules = (load(readFileSync(join(ROOT, RULES), 'utf8')) as { groups: { rules: AlertRule[] }[] }).groups.flatMap(
  (group) => group.rules,
);
const ruleTests = (load(readFileSync(join(ROOT, RULE_TESTS), 'utf8')) as { tests: RuleTest[] }).tests;

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function runbookAnchors(): Set<string> {
  const text = readFileSync(join(ROOT, RUNBOOK), 'utf8');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => anchorOf(match[1])));
}

const promtool = findPromtool();
if (!promtool && !inCi()) {
  console.warn(`\n!!! The promtool checks of ${RULES} did NOT run (skipped): ${PROMTOOL_MISSING} !!!\n`);
}
const withPromtool = promtool || inCi() ? it : it.skip;

function runPromtool(...args: string[]): { status: number | null; output: string } {
  if (!promtool) throw new Error(`CI must check the alert rules: ${PROMTOOL_MISSING}`);
  const result = spawnSync(promtool, args, { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, output: `${result.stdout}${result.stderr}${result.error?.message ?? ''}` };
}

describe(RULES, () => {
  withPromtool('is accepted by promtool check rules', () => {
    expect(runPromtool('check', 'rules', RULES)).toMatchObject({ status: 0 });
  });

  withPromtool(`passes its unit tests (promtool test rules ${RULE_TESTS})`, () => {
    expect(runPromtool('test', 'rules', RULE_TESTS)).toMatchObject({ status: 0 });
  });

  it("holds the contract's alerts, each once", () => {
    const names = rules.map((rule) => rule.alert);
    expect(names).toEqual(expect.arrayContaining(CONTRACT_ALERTS));
    expect(new Set(names).size).toBe(names.length);
  });

  it('gives every alert a severity, a summary, a description and a runbook_url at its section of docs/operations.md', () => {
    const anchors = runbookAnchors();
    for (const rule of rules) {
      expect({ alert: rule.alert, severity: rule.labels?.severity }).toEqual({
        alert: rule.alert,
        severity: expect.stringMatching(/^(critical|warning)$/),
      });
      expect(rule.annotations).toEqual(
        expect.objectContaining({
          summary: expect.any(String),
          description: expect.any(String),
          runbook_url: `${RUNBOOK_BASE}#${rule.alert.toLowerCase()}`,
        }),
      );
      expect({ alert: rule.alert, hasSection: anchors.has(rule.alert.toLowerCase()) }).toEqual({
        alert: rule.alert,
        hasSection: true,
      });
    }
    expect(readFileSync(join(ROOT, RUNBOOK), 'utf8')).toContain(RUNBOOK_BASE);
  });

  it('aggregates the global gauges over processes with max, never sum, and groups by no account', () => {
    for (const rule of rules) {
      for (const gauge of GLOBAL_GAUGES.filter((name) => new RegExp(`\\b${name}\\b`).test(rule.expr))) {
        expect({ alert: rule.alert, expr: rule.expr }).toEqual({
          alert: rule.alert,
          expr: expect.stringMatching(new RegExp(`\\bmax(\\s+by\\s*\\([^)]*\\))?\\s*\\(\\s*${gauge}\\b`)),
        });
      }
      expect(rule.expr).not.toMatch(/account/);
    }
  });

  it('has unit tests in which every alert fires and in which it stays silent', () => {
    const cases = ruleTests.flatMap((test) => test.alert_rule_test ?? []);
    for (const { alert } of rules) {
      const own = cases.filter((entry) => entry.alertname === alert);
      expect({ alert, fires: own.some((entry) => (entry.exp_alerts ?? []).length > 0) }).toEqual({
        alert,
        fires: true,
      });
      expect({ alert, silent: own.some((entry) => (entry.exp_alerts ?? []).length === 0) }).toEqual({
        alert,
        silent: true,
      });
    }
  });
});
