import { createAccount, createVerification, transition } from '../helpers/factories';
import { jsonLines } from '../helpers/ops-infra';
import { TestApp, startApp } from '../helpers/test-app';
import { WebhookReceiver } from '../helpers/webhook-receiver';

const ADMIN = '/api/v1/admin/accounts';

async function attemptsWhenFailed(t: TestApp, verificationId: string): Promise<Array<{ error: string | null }>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const event = await t.db.query(`SELECT id, delivery_status FROM webhook_events WHERE verification_id = $1`, [
      verificationId,
    ]);
    if (event.rows[0]?.delivery_status === 'failed') {
      const attempts = await t.db.query('SELECT error FROM webhook_attempts WHERE event_id = $1 ORDER BY number', [
        event.rows[0].id,
      ]);
      return attempts.rows;
    }
    if (Date.now() > deadline) throw new Error(`event of ${verificationId} is ${event.rows[0]?.delivery_status}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('SSRF through IPv6 forms, secrets in logged URLs', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_sec_a`,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
      WEBHOOK_TIMEOUT_MS: '3000',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
      LOG_LEVEL: 'info',
    });
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  describe('IPv6 addresses that embed a non-public IPv4 address are refused at connect time', () => {
    // Registration accepts IP literals (the contract refuses private targets at connect time), so
    // the assertion is on delivery: every attempt blocked, none reaching a network error.
    it.each([
      '::127.0.0.1',
      '::169.254.169.254',
      '::10.0.0.1',
      '64:ff9b::7f00:1',
      '64:ff9b:1::7f00:1',
      '2002:7f00:1::',
      '2001:0:4136:e378:8000:63bf:80ff:fffe',
      '::ffff:0:127.0.0.1',
      '0:0:0:0:0:0:A9FE:A9FE',
    ])('[%s] registers (POST and PATCH) but no connection is attempted', async (address) => {
      const created = await t.http
        .post(ADMIN)
        .set('authorization', `Bearer ${t.adminToken}`)
        .send({ name: 'embedded v4', webhook_url: `https://[${address}]/hook` });
      expect(created.status).toBe(201);
      const target = `http://[${address}]:${receiver.port}/hook`;
      const patched = await t.http
        .patch(`${ADMIN}/${created.body.id}`)
        .set('authorization', `Bearer ${t.adminToken}`)
        .send({ webhook_url: target });
      expect(patched.status).toBe(200);
      const v = await createVerification(t, created.body.id);
      await transition(t, v.id, { status: 'processing' });
      const attempts = await attemptsWhenFailed(t, v.id);
      expect(attempts.length).toBeGreaterThan(0);
      // Before the fix these were connect errors (EHOSTUNREACH): a connection was attempted.
      expect(attempts.map((attempt) => attempt.error)).toEqual(attempts.map(() => 'blocked: private address'));
      expect(receiver.requests).toHaveLength(0);
    });
  });

  describe('a webhook secret in the URL never reaches a log line, however it is encoded', () => {
    const percentEncodeAll = (text: string, upper: boolean) =>
      [...Buffer.from(text)]
        .map((byte) => `%${byte.toString(16).padStart(2, '0')}`[upper ? 'toUpperCase' : 'toLowerCase']())
        .join('');

    it('logs each request (with its id) without the secret, its base64 key or any encoding of them', async () => {
      const account = await createAccount(t);
      const secret = account.secret;
      const key = secret.slice('whsec_'.length);
      const urlSafeKey = key.replaceAll('+', '-').replaceAll('/', '_');
      const forms = [
        secret,
        key,
        urlSafeKey,
        encodeURIComponent(secret),
        encodeURIComponent(key),
        encodeURIComponent(urlSafeKey),
        encodeURIComponent(secret).toLowerCase(),
        encodeURIComponent(encodeURIComponent(secret)),
        percentEncodeAll(secret, true),
        percentEncodeAll(secret, false),
        percentEncodeAll(key, true),
        `whsec%5F${encodeURIComponent(key)}`,
        `%77hsec_${key.replaceAll('+', '%2b').replaceAll('/', '%2F').replaceAll('=', '%3d')}`,
      ];
      const paths = [
        ...forms.map((form) => `/api/v1/admin/x/${form}`),
        `/api/v1/admin/x?token=${encodeURIComponent(secret)}`,
        `/api/v1/public/kyc/verifications?token=${encodeURIComponent(key)}`,
        `/api/v1/nope?a=1&webhook_secret=${percentEncodeAll(secret, false)}`,
      ];
      const before = t.output.length;
      for (const [i, path] of paths.entries()) {
        const res = await t.http.get(path).set('x-request-id', `sec-a-log-${i}`);
        expect([400, 401, 404]).toContain(res.status);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      const lines = t.output.slice(before).join('').split('\n');
      const logged = jsonLines(t.output.slice(before));
      for (const [i] of paths.entries()) {
        const line = logged.find((entry) => entry.request_id === `sec-a-log-${i}` && entry.status !== undefined);
        expect(line).toBeDefined();
        // The unmatched path is logged, with the secret taken out whatever its encoding.
        if (i < forms.length) expect(line).toMatchObject({ route: 'unmatched', path: '/api/v1/admin/x/[REDACTED]' });
      }
      const leaks = [...forms, key.slice(0, 16), key.slice(-16), encodeURIComponent(key).slice(0, 20)];
      for (const line of lines) {
        for (const leak of leaks) expect(line).not.toContain(leak);
      }
    });

    it('logs an unmatched path truncated: attacker-chosen text stays short', async () => {
      const long = `/api/v1/admin/${'a'.repeat(40)}/${'b'.repeat(300)}`;
      const before = t.output.length;
      const res = await t.http.get(long).set('x-request-id', 'sec-a-long');
      expect(res.status).toBe(404);
      await new Promise((resolve) => setTimeout(resolve, 300));
      const lines = jsonLines(t.output.slice(before)).filter((line) => line.request_id === 'sec-a-long');
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.some((line) => typeof line.path === 'string' && line.path.startsWith('/api/v1/admin/aaaa'))).toBe(
        true,
      );
      for (const line of lines) expect(JSON.stringify(line)).not.toContain('b'.repeat(100));
      expect(lines.find((line) => line.route === 'unmatched')?.path).toBe(`${long.slice(0, 64)}…`);
    });
  });
});
