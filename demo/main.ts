import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { type AppConfig, ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { createApp } from 'src/create-app';
import { runMigrations } from 'src/database/migration-runner';
import { type Api, apiAt, type List, type Verification, type WebhookEventItem } from './demo-api';
import { demoEnvironment, resetDemoDatabase, resetDemoQueue } from './demo-env';
import { DemoReceiver } from './demo-receiver';

const WEBHOOK_WAIT_MS = 20_000;

/** What every step needs: the running service's API, its configuration and the client's receiver. */
interface DemoRun {
  api: Api;
  config: AppConfig;
  receiver: DemoReceiver;
}

interface Applicant {
  externalUserId: string;
  applicant: object;
  decision: { status: string; rejection_reasons?: string[] };
}

/** One verification approved, one rejected with reasons. */
const APPLICANTS: Applicant[] = [
  {
    externalUserId: 'user-ada',
    applicant: { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' },
    decision: { status: 'approved' },
  },
  {
    externalUserId: 'user-bob',
    applicant: { first_name: 'Bob', last_name: 'Stone', email: 'bob@example.com' },
    decision: { status: 'rejected', rejection_reasons: ['document_expired', 'face_mismatch'] },
  },
];

const say = (line = ''): void => {
  process.stdout.write(line + '\n');
};

/** The demo's own database, queue prefix and tokens, put into process.env and read back as the service reads them. */
function configureDemo(): AppConfig {
  // The one place the demo touches the environment: it configures the service it boots in-process.
  Object.assign(process.env, demoEnvironment(process.env));
  return loadConfig();
}

/** Clears what an earlier run left in the demo's queue prefix and database, then migrates it afresh. */
async function resetDemoData(config: AppConfig): Promise<void> {
  await resetDemoQueue(config.redisUrl, config.queuePrefix);
  await resetDemoDatabase(config.databaseUrl);
  await runMigrations(config.databaseUrl);
}

/** Listens on a free local port and prints where the service and the receiver are; returns the service's base URL. */
async function listen(app: NestExpressApplication, config: AppConfig, hookUrl: string): Promise<string> {
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  const databaseName = new URL(config.databaseUrl).pathname.slice(1);
  say('KYC verification delivery: demo');
  say(`  service   ${base}  (database ${databaseName}, queue prefix ${config.queuePrefix}, docs at /api/docs)`);
  say(`  receiver  ${hookUrl}  (verifies every signature with standardwebhooks)`);
  say();
  return base;
}

/** Admin API: the client's account; the receiver verifies signatures with the secret it returns. */
async function createAccount(
  { api, config, receiver }: DemoRun,
  hookUrl: string,
): Promise<{ id: string; webhook_secret: string }> {
  const account = await api<{ id: string; name: string; webhook_secret: string }>(
    'POST',
    '/api/v1/admin/accounts',
    config.adminToken,
    {
      name: 'Demo Bank',
      webhook_url: hookUrl,
    },
  );
  receiver.useSecret(account.webhook_secret);
  say(`Admin API    POST /api/v1/admin/accounts → account ${account.id} "${account.name}"`);
  say(
    `             webhook secret ${account.webhook_secret.slice(0, 10)}… (returned once; the client signs in with it)`,
  );
  return account;
}

/** Internal API: one status change, then the webhook it caused, once the receiver has verified it. */
async function transition({ api, config, receiver }: DemoRun, id: string, body: object, label: string): Promise<void> {
  const updated = await api<Verification>(
    'POST',
    `/api/v1/internal/kyc/verifications/${id}/transitions`,
    config.internalApiToken,
    body,
  );
  say(`  → ${`${updated.status} v${updated.version}`.padEnd(14)}${label}`);
  const hook = await receiver.next(WEBHOOK_WAIT_MS);
  const v = hook.event.data.verification;
  say(
    `    ⇠ webhook ${hook.webhookId}  ${hook.event.data.previous_status} → ${v.status} v${v.version}  signature verified ✓`,
  );
}

/** Internal API: a verification for one applicant, to processing, then to its decision; returns the webhooks verified. */
async function driveVerification(
  run: DemoRun,
  accountId: string,
  { externalUserId, applicant, decision }: Applicant,
): Promise<number> {
  const created = await run.api<Verification>(
    'POST',
    '/api/v1/internal/kyc/verifications',
    run.config.internalApiToken,
    {
      account_id: accountId,
      external_user_id: externalUserId,
      applicant,
      metadata: { source: 'demo' },
    },
  );
  say();
  say(
    `Internal API verification ${created.id} for ${externalUserId}: ${created.status} v${created.version} (no webhook on creation)`,
  );
  const reasons = decision.rejection_reasons ? ` (${decision.rejection_reasons.join(', ')})` : '';
  const steps: [object, string][] = [
    [{ status: 'processing', expected_version: 1, document: { type: 'passport', country: 'GB' } }, 'images submitted'],
    [{ ...decision, expected_version: 2 }, `decision${reasons}`],
  ];
  for (const [body, label] of steps) await transition(run, created.id, body, label);
  return steps.length;
}

/** Public API: the client's verifications, read with its webhook secret. */
async function showVerifications({ api }: DemoRun, secret: string): Promise<void> {
  const list = await api<List<Verification>>('GET', '/api/v1/public/kyc/verifications?sort=created_at', secret);
  say();
  say(`Public API   GET /api/v1/public/kyc/verifications  (Bearer <webhook secret>)`);
  say(
    `  { object: "list", has_more: ${list.has_more}, next_cursor: ${list.next_cursor}, data: ${list.data.length} verifications }`,
  );
  for (const v of list.data) {
    say(
      `  ${v.id}  ${v.external_user_id.padEnd(9)} ${v.status.padEnd(9)} v${v.version}  ${v.rejection_reasons.join(', ') || '-'}`,
    );
  }
}

/** Public API: the delivery log, once the worker has recorded every attempt. */
async function showDeliveryLog({ api }: DemoRun, secret: string): Promise<void> {
  // The receiver answers before the worker records the attempt; wait for the log to catch up.
  let log = await api<List<WebhookEventItem>>('GET', '/api/v1/public/kyc/webhook-events', secret);
  for (let i = 0; i < 50 && log.data.some((event) => event.delivery_status !== 'delivered'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    log = await api<List<WebhookEventItem>>('GET', '/api/v1/public/kyc/webhook-events', secret);
  }
  say();
  say(`Public API   GET /api/v1/public/kyc/webhook-events  (the delivery log, newest first)`);
  for (const e of log.data) {
    const change = `${e.payload.data.previous_status} → ${e.payload.data.verification.status}`;
    say(
      `  ${e.id}  ${change.padEnd(24)} ${e.delivery_status.padEnd(9)} attempts ${e.attempt_count}  last HTTP ${e.last_response_status ?? '-'}`,
    );
  }
}

/** `npm run demo`: the whole product in one screen, against its own database and queue prefix. */
async function demo(): Promise<void> {
  const config = configureDemo();
  await resetDemoData(config);
  const receiver = new DemoReceiver();
  const hookUrl = await receiver.start();
  const app = await createApp(config);
  try {
    const run: DemoRun = { api: apiAt(await listen(app, config, hookUrl)), config, receiver };
    const account = await createAccount(run, hookUrl);
    let verified = 0;
    for (const applicant of APPLICANTS) verified += await driveVerification(run, account.id, applicant);
    await showVerifications(run, account.webhook_secret);
    await showDeliveryLog(run, account.webhook_secret);
    say();
    say(`Done: ${verified} webhooks received, ${verified} signatures verified, ${receiver.rejected} rejected.`);
  } finally {
    await app.close();
    await receiver.close();
  }
}

demo().then(
  () => {
    // Everything is closed; this only guards against a client library keeping the loop alive.
    setTimeout(() => process.exit(0), 5_000).unref();
  },
  (error: unknown) => {
    process.stderr.write(
      error instanceof ConfigError ? `${error.message}\n` : `Demo failed: ${(error as Error).message}\n`,
    );
    process.exit(1);
  },
);
