import { randomBytes } from 'node:crypto';
import { Pool } from 'pg';
import { Webhook } from 'standardwebhooks';
import { SecretKeyring, keyIdOf } from 'src/accounts/secret-crypto';
import { cliWith } from './helpers/cli';
import { type CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { ownDatabase } from './helpers/own-database';
import { metricValue, waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * SECRET_ENCRYPTION_KEY against what is stored: a start whose keys cannot open the stored secrets
 * stops with one line; a rotation lists the new key first, `reencrypt` moves every secret to it, and
 * the old key can then go; a secret that cannot be opened at delivery is a recorded failed attempt.
 * On a database of its own: the run's database holds secrets sealed under the run's key.
 */

const base64 = (key: Buffer): string => key.toString('base64');
const [KEY_A, KEY_B, KEY_C] = [randomBytes(32), randomBytes(32), randomBytes(32)];

describe('SECRET_ENCRYPTION_KEY: checked at start, rotatable', () => {
  let database: Awaited<ReturnType<typeof ownDatabase>>;
  let db: Pool;
  let receiver: WebhookReceiver;
  const running: TestApp[] = [];

  const env = (keys: Buffer[]): Record<string, string> => ({
    DATABASE_URL: database.url,
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_keys`,
    SECRET_ENCRYPTION_KEY: keys.map(base64).join(','),
    WEBHOOK_RETRY_SCHEDULE: '200ms,200ms',
    APP_ROLE: 'all',
    LOG_LEVEL: 'warn',
  });
  const start = async (keys: Buffer[]): Promise<TestApp> => {
    const app = await startApp(env(keys));
    running.push(app);
    return app;
  };
  const stop = async (app: TestApp): Promise<void> => {
    await app.close();
    running.splice(running.indexOf(app), 1);
  };
  const sealers = async (): Promise<string[]> => {
    const { rows } = await db.query<{ ciphertext: string }>(
      'SELECT secret_ciphertext AS ciphertext FROM account_secrets ORDER BY id',
    );
    return rows.map((row) => SecretKeyring.sealerOf(row.ciphertext));
  };
  /** One status change of a new verification of the account, delivered and verified with its secret. */
  const deliveredAndVerified = async (app: TestApp, account: CreatedAccount): Promise<void> => {
    const verification = await createVerification(app, account.id);
    await transition(app, verification.id, { status: 'processing' });
    const requests = await receiver.waitFor(
      (all) => all.some((request) => request.body.includes(verification.id) && request.body.includes('processing')),
      20_000,
      `the webhook of ${verification.id}`,
    );
    const request = requests.find((r) => r.body.includes(verification.id) && r.body.includes('processing'));
    expect(() =>
      new Webhook(account.secret).verify(request?.body ?? '', request?.headers as Record<string, string>),
    ).not.toThrow();
  };

  beforeAll(async () => {
    database = await ownDatabase('keys');
    db = new Pool({ connectionString: database.url, max: 2 });
    receiver = await WebhookReceiver.start();
  });

  afterAll(async () => {
    for (const app of running) await app.kill();
    await receiver.close();
    await db.end();
    await database.drop();
  });

  it('refuses to start with a key that cannot open the stored secrets, in one line naming SECRET_ENCRYPTION_KEY', async () => {
    const first = await start([KEY_A]);
    await createAccount(first, { webhook_url: receiver.url });
    await stop(first);

    const wrong = await startApp(env([KEY_B]), { waitForHttp: false });
    const code = await new Promise<number | null>((resolve) => {
      if (wrong.process.exitCode !== null) resolve(wrong.process.exitCode);
      wrong.process.once('exit', (exitCode) => resolve(exitCode));
    });
    await wrong.db.end();
    const output = wrong.output.join('');
    expect(code).toBe(1);
    const lines = output.split('\n').filter((line) => line.includes('SECRET_ENCRYPTION_KEY'));
    expect(lines).toEqual([
      `Invalid configuration: SECRET_ENCRYPTION_KEY cannot decrypt the stored webhook secrets (1 sealed by key ${keyIdOf(KEY_A)}): ` +
        `does not hold key ${keyIdOf(KEY_A)}, which sealed this secret. ` +
        'Set it to the key they were created with; during a rotation list every key, newest first',
    ]);
    expect(output).not.toMatch(/\n\s+at /);
    for (const key of [KEY_A, KEY_B]) expect(output).not.toContain(base64(key));
  });

  it('rotates: new key first beside the old one, reencrypt, then the old key can go; deliveries verify throughout', async () => {
    const old = await start([KEY_A]);
    const before = await createAccount(old, { webhook_url: receiver.url });
    await stop(old);

    const rotating = await start([KEY_B, KEY_A]);
    await deliveredAndVerified(rotating, before);
    const during = await createAccount(rotating, { webhook_url: receiver.url });
    expect(new Set(await sealers())).toEqual(new Set([keyIdOf(KEY_A), keyIdOf(KEY_B)]));

    const reencrypt = await cliWith(env([KEY_B, KEY_A]), 'reencrypt', '--batch-size', '1');
    expect(reencrypt).toMatchObject({ code: 0, stderr: '' });
    expect(reencrypt.stdout).toContain(`under key ${keyIdOf(KEY_B)}`);
    expect(new Set(await sealers())).toEqual(new Set([keyIdOf(KEY_B)]));
    // Run again, it finds nothing left to move.
    const again = await cliWith(env([KEY_B, KEY_A]), 'reencrypt');
    expect(again.stdout).toContain('Re-encrypted 0 secret(s)');
    await stop(rotating);

    const after = await start([KEY_B]);
    await deliveredAndVerified(after, before);
    await deliveredAndVerified(after, during);
    await stop(after);
  });

  it('records a secret no key opens as a failed attempt at delivery, logged and counted, never an endless retry', async () => {
    const app = await start([KEY_B]);
    const account = await createAccount(app, { webhook_url: receiver.url });
    // Sealed under a key the process does not hold (as if written by a process with another key).
    await db.query(`UPDATE account_secrets SET secret_ciphertext = $2 WHERE account_id = $1`, [
      account.id,
      new SecretKeyring([KEY_C]).seal(account.secret),
    ]);
    const received = receiver.requests.length;
    const verification = await createVerification(app, account.id);
    await transition(app, verification.id, { status: 'processing' });

    const event = await waitFor(
      async () =>
        (
          await db.query<{ delivery_status: string; attempt_count: number; last_error: string | null }>(
            `SELECT delivery_status, attempt_count, last_error FROM webhook_events
              WHERE verification_id = $1 ORDER BY created_at DESC LIMIT 1`,
            [verification.id],
          )
        ).rows[0],
      (row) => row?.delivery_status === 'failed',
      'the event to fail after its schedule',
    );
    expect(event).toEqual({
      delivery_status: 'failed',
      attempt_count: 3,
      last_error: 'signing secret cannot be decrypted (SECRET_ENCRYPTION_KEY)',
    });
    expect(receiver.requests.slice(received).filter((r) => r.body.includes(verification.id))).toEqual([]);
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(
      metricValue(metrics, 'webhook_delivery_attempts_total', 'outcome="signing_key_error"'),
    ).toBeGreaterThanOrEqual(3);
    const output = app.output.join('');
    expect(output).toContain(`not sent: its signing secret: SECRET_ENCRYPTION_KEY does not hold key ${keyIdOf(KEY_C)}`);
    expect(output).not.toContain('Unsupported state or unable to authenticate data');
    expect(output).not.toMatch(/\n\s+at /);
  });
});
