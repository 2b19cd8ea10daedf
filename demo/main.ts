import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { createApp } from 'src/create-app';
import { runMigrations } from 'src/database/migrate';
import { demoEnvironment, resetDemoDatabase, resetDemoQueue } from './demo-env';
import { DemoReceiver, ReceivedWebhook } from './demo-receiver';

const WEBHOOK_WAIT_MS = 20_000;

interface Verification {
  id: string;
  external_user_id: string;
  status: string;
  version: number;
  rejection_reasons: string[];
  updated_at: string;
}

interface WebhookEventItem {
  id: string;
  verification_id: string;
  delivery_status: string;
  attempt_count: number;
  last_response_status: number | null;
  payload: ReceivedWebhook['event'];
}

interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

const say = (line = ''): void => {
  process.stdout.write(line + '\n');
};

/** `npm run demo`: the whole product in one screen, against its own database and queue prefix. */
async function demo(): Promise<void> {
  // The one place the demo touches the environment: it configures the service it boots in-process.
  Object.assign(process.env, demoEnvironment(process.env));
  const config = loadConfig();
  const databaseName = new URL(config.databaseUrl).pathname.slice(1);

  await resetDemoQueue(config.redisUrl, config.queuePrefix);
  await resetDemoDatabase(config.databaseUrl);
  await runMigrations(config.databaseUrl);

  const receiver = new DemoReceiver();
  const hookUrl = await receiver.start();
  const app = await createApp(config);
  try {
    await app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    say('KYC verification delivery: demo');
    say(`  service   ${base}  (database ${databaseName}, queue prefix ${config.queuePrefix}, docs at /api/docs)`);
    say(`  receiver  ${hookUrl}  (verifies every signature with standardwebhooks)`);
    say();

    const api = async <T>(method: string, path: string, token: string, body?: object): Promise<T> => {
      const res = await fetch(base + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
      return JSON.parse(text) as T;
    };

    const account = await api<{ id: string; name: string; webhook_secret: string }>('POST', '/api/v1/admin/accounts', config.adminToken, {
      name: 'Demo Bank',
      webhook_url: hookUrl,
    });
    receiver.useSecret(account.webhook_secret);
    say(`Admin API    POST /api/v1/admin/accounts → account ${account.id} "${account.name}"`);
    say(`             webhook secret ${account.webhook_secret.slice(0, 10)}… (returned once; the client signs in with it)`);

    let verified = 0;
    const transition = async (id: string, body: object, label: string): Promise<void> => {
      const updated = await api<Verification>('POST', `/api/v1/internal/kyc/verifications/${id}/transitions`, config.internalApiToken, body);
      say(`  → ${`${updated.status} v${updated.version}`.padEnd(14)}${label}`);
      const hook = await receiver.next(WEBHOOK_WAIT_MS);
      const v = hook.event.data.verification;
      verified++;
      say(`    ⇠ webhook ${hook.webhookId}  ${hook.event.data.previous_status} → ${v.status} v${v.version}  signature verified ✓`);
    };

    const drive = async (externalUserId: string, applicant: object, decision: { status: string; rejection_reasons?: string[] }): Promise<void> => {
      const created = await api<Verification>('POST', '/api/v1/internal/kyc/verifications', config.internalApiToken, {
        account_id: account.id,
        external_user_id: externalUserId,
        applicant,
        metadata: { source: 'demo' },
      });
      say();
      say(`Internal API verification ${created.id} for ${externalUserId}: ${created.status} v${created.version} (no webhook on creation)`);
      await transition(created.id, { status: 'processing', expected_version: 1, document: { type: 'passport', country: 'GB' } }, 'images submitted');
      const reasons = decision.rejection_reasons ? ` (${decision.rejection_reasons.join(', ')})` : '';
      await transition(created.id, { ...decision, expected_version: 2 }, `decision${reasons}`);
    };

    await drive('user-ada', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' }, { status: 'approved' });
    await drive('user-bob', { first_name: 'Bob', last_name: 'Stone', email: 'bob@example.com' }, {
      status: 'rejected',
      rejection_reasons: ['document_expired', 'face_mismatch'],
    });

    const list = await api<List<Verification>>('GET', '/api/v1/public/kyc/verifications?sort=created_at', account.webhook_secret);
    say();
    say(`Public API   GET /api/v1/public/kyc/verifications  (Bearer <webhook secret>)`);
    say(`  { object: "list", has_more: ${list.has_more}, next_cursor: ${list.next_cursor}, data: ${list.data.length} verifications }`);
    for (const v of list.data) {
      say(`  ${v.id}  ${v.external_user_id.padEnd(9)} ${v.status.padEnd(9)} v${v.version}  ${v.rejection_reasons.join(', ') || '-'}`);
    }

    // The receiver answers before the worker records the attempt; wait for the log to catch up.
    let log = await api<List<WebhookEventItem>>('GET', '/api/v1/public/kyc/webhook-events', account.webhook_secret);
    for (let i = 0; i < 50 && log.data.some((event) => event.delivery_status !== 'delivered'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      log = await api<List<WebhookEventItem>>('GET', '/api/v1/public/kyc/webhook-events', account.webhook_secret);
    }
    say();
    say(`Public API   GET /api/v1/public/kyc/webhook-events  (the delivery log, newest first)`);
    for (const e of log.data) {
      const change = `${e.payload.data.previous_status} → ${e.payload.data.verification.status}`;
      say(`  ${e.id}  ${change.padEnd(24)} ${e.delivery_status.padEnd(9)} attempts ${e.attempt_count}  last HTTP ${e.last_response_status ?? '-'}`);
    }
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
    process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `Demo failed: ${(error as Error).message}\n`);
    process.exit(1);
  },
);
