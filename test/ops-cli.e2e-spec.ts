import Redis from 'ioredis';
import { cli } from './helpers/cli';
import { createAccount, createVerification, transition } from './helpers/factories';
import { startApp, TestApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const UNKNOWN_ID = '0193a6f2-0000-7000-8000-000000000000';

/** A failed event: an account without webhook_url gets its events recorded as failed at once. */
async function failedEvent(t: TestApp, accountId: string): Promise<string> {
  const v = await createVerification(t, accountId);
  await transition(t, v.id, { status: 'processing' });
  const { rows } = await t.db.query<{ id: string }>(
    `SELECT id FROM webhook_events WHERE verification_id = $1 AND delivery_status = 'failed'`,
    [v.id],
  );
  expect(rows).toHaveLength(1);
  return rows[0].id;
}

describe('operations CLI (npm run cli)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let redis: Redis;

  beforeAll(async () => {
    // API only: nothing in this test delivers, so a queued replay stays visible in Redis.
    t = await startApp({ APP_ROLE: 'api' });
    receiver = await WebhookReceiver.start();
    redis = new Redis(process.env.REDIS_URL as string, { maxRetriesPerRequest: 1 });
  });

  afterAll(async () => {
    redis.disconnect();
    await receiver.close();
    await t.close();
  });

  it('--help lists every command and exits 0', async () => {
    for (const args of [['--help'], []]) {
      const result = await cli(...args);
      expect(result.code).toBe(0);
      for (const command of [
        'accounts:create',
        'accounts:rotate-secret',
        'deliveries:failed',
        'deliveries:replay',
        'redact <verification-id>',
        'retention [--dry-run]',
      ]) {
        expect(result.stdout).toContain(command);
      }
    }
    const one = await cli('deliveries:replay', '--help');
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('Usage: npm run cli -- deliveries:replay <account-id> [--event <event-id>]');
  });

  it('refuses bad arguments with one line on stderr and a non-zero exit', async () => {
    const cases: [string[], number, RegExp][] = [
      [['accounts:frobnicate'], 2, /^error: unknown command "accounts:frobnicate"/],
      [['accounts:create'], 2, /^error: accounts:create: --name <name> is required/],
      [['accounts:rotate-secret'], 2, /^error: accounts:rotate-secret: missing <account-id>/],
      [
        ['deliveries:failed', UNKNOWN_ID, '--limit', '500'],
        2,
        /^error: deliveries:failed: --limit must be an integer between 1 and 100/,
      ],
      [['deliveries:failed', 'not-a-uuid'], 2, /^error: deliveries:failed: <account-id> must be a UUID/],
      [['deliveries:failed', UNKNOWN_ID], 1, /^error: No such account/],
      [['accounts:rotate-secret', UNKNOWN_ID], 1, /^error: No such account/],
      [['accounts:create', '--name', 'X', '--webhook-url', 'ftp://example.com/h'], 1, /^error: --webhook-url: /],
      [
        ['deliveries:replay', UNKNOWN_ID, '--event', UNKNOWN_ID, '--created-from', '2026-01-01T00:00:00Z'],
        2,
        /cannot be combined/,
      ],
    ];
    const results = await Promise.all(cases.map(([args]) => cli(...args)));
    results.forEach((result, i) => {
      const [args, code, message] = cases[i];
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code, stdout: '' });
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    });
  });

  it('accounts:create prints the account and a secret that authenticates the public API', async () => {
    const result = await cli('accounts:create', '--name', 'Acme Bank', `--webhook-url=${receiver.url}`);
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as Record<string, string>;
    expect(created).toMatchObject({ object: 'account', name: 'Acme Bank', webhook_url: receiver.url });
    expect(created.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const list = await t.http
      .get('/api/v1/public/kyc/verifications')
      .set('authorization', `Bearer ${created.webhook_secret}`);
    expect(list.status).toBe(200);
    const admin = await t.http
      .get(`/api/v1/admin/accounts/${created.id}`)
      .set('authorization', `Bearer ${t.adminToken}`);
    expect(admin.body).toMatchObject({ id: created.id, name: 'Acme Bank' });
  });

  it('accounts:rotate-secret issues a new secret; the old one lasts for the grace period', async () => {
    const account = await createAccount(t);
    const rotated = await cli('accounts:rotate-secret', account.id, '--grace-seconds', '600');
    expect(rotated.code).toBe(0);
    const body = JSON.parse(rotated.stdout) as { webhook_secret: string; previous_secret_expires_at: string };
    expect(body.webhook_secret).toMatch(/^whsec_/);
    expect(Date.parse(body.previous_secret_expires_at) - Date.now()).toBeGreaterThan(590_000);
    const auth = (secret: string) =>
      t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${secret}`);
    expect((await auth(body.webhook_secret)).status).toBe(200);
    expect((await auth(account.secret)).status).toBe(200);

    const again = await cli('accounts:rotate-secret', account.id, '--grace-seconds=0');
    expect(again.code).toBe(0);
    const newest = (JSON.parse(again.stdout) as { webhook_secret: string }).webhook_secret;
    expect((await auth(newest)).status).toBe(200);
    expect((await auth(body.webhook_secret)).status).toBe(401);
    expect((await auth(account.secret)).status).toBe(401);
  });

  it("deliveries:failed lists the account's failed events, newest first, honouring --limit", async () => {
    const account = await createAccount(t, { webhook_url: null });
    const empty = await cli('deliveries:failed', account.id);
    expect(empty).toMatchObject({ code: 0, stdout: `No failed webhook events for account ${account.id}.\n` });
    const older = await failedEvent(t, account.id);
    const newer = await failedEvent(t, account.id);
    const other = await failedEvent(t, (await createAccount(t, { webhook_url: null })).id);

    const all = await cli('deliveries:failed', account.id);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain('2 failed webhook event(s), newest first:');
    expect(all.stdout.indexOf(newer)).toBeGreaterThan(-1);
    expect(all.stdout.indexOf(newer)).toBeLessThan(all.stdout.indexOf(older));
    expect(all.stdout).toContain('no_webhook_url');
    expect(all.stdout).not.toContain(other);

    const one = await cli('deliveries:failed', account.id, '--limit', '1');
    expect(one.stdout).toContain('1 failed webhook event(s), newest first (more exist');
    expect(one.stdout).toContain(newer);
    expect(one.stdout).not.toContain(older);
  });

  it('deliveries:replay queues failed events for the workers without delivering them itself', async () => {
    const account = await createAccount(t, { webhook_url: null });
    const first = await failedEvent(t, account.id);
    const second = await failedEvent(t, account.id);
    const elsewhere = await failedEvent(t, (await createAccount(t, { webhook_url: null })).id);
    const waiting = async (): Promise<string[]> =>
      redis.lrange(`${process.env.QUEUE_PREFIX}:webhook-deliveries:wait`, 0, -1);
    const status = async (id: string): Promise<{ delivery_status: string; cycle: number }> =>
      (
        await t.db.query<{ delivery_status: string; cycle: number }>(
          'SELECT delivery_status, cycle FROM webhook_events WHERE id = $1',
          [id],
        )
      ).rows[0];

    const single = await cli('deliveries:replay', account.id, '--event', first);
    expect(single).toMatchObject({
      code: 0,
      stdout: `Event ${first} queued for redelivery (a fresh retry cycle, same webhook-id).\n`,
    });
    expect(await status(first)).toEqual({ delivery_status: 'pending', cycle: 2 });
    expect(await status(second)).toMatchObject({ delivery_status: 'failed' });
    expect(await waiting()).toContain(`${first}:2`);

    const future = await cli(
      'deliveries:replay',
      account.id,
      '--created-from',
      new Date(Date.now() + 3_600_000).toISOString(),
    );
    expect(future).toMatchObject({
      code: 0,
      stdout: `0 failed event(s) of account ${account.id} queued for redelivery.\n`,
    });

    const bulk = await cli('deliveries:replay', account.id);
    expect(bulk).toMatchObject({
      code: 0,
      stdout: `1 failed event(s) of account ${account.id} queued for redelivery.\n`,
    });
    expect(await status(second)).toEqual({ delivery_status: 'pending', cycle: 2 });
    expect(await status(elsewhere)).toMatchObject({ delivery_status: 'failed' });
    expect(await waiting()).toEqual(expect.arrayContaining([`${first}:2`, `${second}:2`]));
    // The CLI started no worker: the jobs are still waiting for one.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await waiting()).toEqual(expect.arrayContaining([`${first}:2`, `${second}:2`]));

    const badTime = await cli('deliveries:replay', account.id, '--created-to', 'yesterday');
    expect(badTime.code).toBe(2);
    expect(badTime.stderr).toMatch(/^error: deliveries:replay: --created-to must be an ISO 8601 date-time/);
  });
});
