/**
 * The client guide's three webhook verifiers (examples/verify-webhook/: Node.js, Python, shell with
 * openssl), run as a client would run them: against the published test vector, and against real
 * deliveries a real receiver captured from the running service.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { webhookHeaders } from 'src/webhooks/outbox/webhook-signer';
import { createAccount, createVerification, transition } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';
import { ReceivedRequest, WebhookReceiver } from './helpers/webhook-receiver';

const ROOT = join(__dirname, '..');
const DIR = join(ROOT, 'examples', 'verify-webhook');
const VERIFIERS = [
  { name: 'Node.js', command: process.execPath, args: [join(DIR, 'verify.mjs')] },
  { name: 'Python', command: 'python3', args: [join(DIR, 'verify.py')] },
  { name: 'shell + openssl', command: 'sh', args: [join(DIR, 'verify.sh')] },
];

interface Vector {
  secret: string;
  webhook_id: string;
  webhook_timestamp: string;
  body: string;
  webhook_signature: string;
}
const VECTOR = JSON.parse(readFileSync(join(ROOT, 'examples', 'webhook-test-vector.json'), 'utf8')) as Vector;

interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
}

function run(verifier: (typeof VERIFIERS)[number], secret: string, d: Delivery, tolerance?: string) {
  const result = spawnSync(verifier.command, [...verifier.args, d.id, d.timestamp, d.signature], {
    input: Buffer.from(d.body, 'utf8'),
    env: {
      PATH: process.env.PATH,
      KYC_WEBHOOK_SECRET: secret,
      ...(tolerance === undefined ? {} : { KYC_WEBHOOK_TOLERANCE_SECONDS: tolerance }),
    },
    encoding: 'utf8',
    timeout: 10_000,
  });
  return { name: verifier.name, code: result.status, out: `${result.stdout}${result.stderr}`.trim() };
}

const vectorDelivery: Delivery = {
  id: VECTOR.webhook_id,
  timestamp: VECTOR.webhook_timestamp,
  signature: VECTOR.webhook_signature,
  body: VECTOR.body,
};

describe('the published webhook test vector', () => {
  it('is what the service signs, and what the standardwebhooks library verifies', () => {
    const at = new Date(Number(VECTOR.webhook_timestamp) * 1000);
    const headers = webhookHeaders(VECTOR.webhook_id, at, VECTOR.body, [VECTOR.secret]);
    expect(headers['webhook-signature']).toBe(VECTOR.webhook_signature);
    const wh = new Webhook(VECTOR.secret);
    const verified = () =>
      wh.verify(VECTOR.body, {
        'webhook-id': VECTOR.webhook_id,
        'webhook-timestamp': VECTOR.webhook_timestamp,
        'webhook-signature': VECTOR.webhook_signature,
      });
    jest.useFakeTimers({ now: at });
    try {
      expect(verified()).toEqual(JSON.parse(VECTOR.body));
    } finally {
      jest.useRealTimers();
    }
  });

  it('is printed in the client guide, value for value', () => {
    const guide = readFileSync(join(ROOT, 'docs', 'client-guide.md'), 'utf8');
    for (const value of Object.values(VECTOR)) expect(guide).toContain(value);
  });

  it.each(VERIFIERS.map((v) => [v.name, v] as const))('%s verifies it, and refuses it tampered', (_, verifier) => {
    expect(run(verifier, VECTOR.secret, vectorDelivery, '0')).toEqual({
      name: verifier.name,
      code: 0,
      out: 'verified',
    });
    const tampered = { ...vectorDelivery, body: VECTOR.body.replace('approved', 'rejected') };
    expect(run(verifier, VECTOR.secret, tampered, '0')).toEqual({
      name: verifier.name,
      code: 1,
      out: 'not verified: no signature matches',
    });
    const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(run(verifier, otherSecret, vectorDelivery, '0').code).toBe(1);
    // Without the tolerance override the vector's timestamp is long past: refused as a replay.
    expect(run(verifier, VECTOR.secret, vectorDelivery)).toEqual({
      name: verifier.name,
      code: 1,
      out: 'not verified: timestamp too old or too new',
    });
  });
});

describe('the verifiers against real deliveries', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({ QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_docs_verifiers`, WEBHOOK_RETRY_SCHEDULE: '200ms' });
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const asDelivery = (request: ReceivedRequest): Delivery => ({
    id: String(request.headers['webhook-id']),
    timestamp: String(request.headers['webhook-timestamp']),
    signature: String(request.headers['webhook-signature']),
    body: request.body,
  });

  it('verify a status change, a redaction, and a delivery signed by two secrets during a rotation', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    const verification = await createVerification(t, account.id, {
      applicant: { first_name: 'Zoë', last_name: 'Łukasiewicz', email: 'zoe@example.com' },
    });
    await transition(t, verification.id, { status: 'processing' });
    const redact = await t.http
      .post(`/api/v1/public/kyc/verifications/${verification.id}/redact`)
      .set('authorization', `Bearer ${account.secret}`);
    expect(redact.status).toBe(200);
    // The two may be in flight at once: each is found by its type, not by its place.
    const firstTwo = await receiver.waitFor((requests) => requests.length >= 2);
    const ofType = (type: string) => firstTwo.find((r) => (JSON.parse(r.body) as { type: string }).type === type);
    const changed = ofType('verification.status_changed');
    const redacted = ofType('verification.redacted');
    if (!changed || !redacted)
      throw new Error(`expected a status change and a redaction, got ${firstTwo.length} requests`);

    const rotated = await t.http
      .post(`/api/v1/admin/accounts/${account.id}/secret/rotate`)
      .set('authorization', `Bearer ${t.adminToken}`)
      .send({ grace_period_seconds: 3600 });
    expect(rotated.status).toBe(200);
    const test = await t.http
      .post('/api/v1/public/kyc/webhook-events/test')
      .set('authorization', `Bearer ${rotated.body.webhook_secret}`)
      .send({ status: 'approved' });
    expect(test.status).toBe(202);
    const all = await receiver.waitFor((requests) => requests.some((r) => r.headers['webhook-id'] === test.body.id));
    const during = all.find((r) => r.headers['webhook-id'] === test.body.id) as ReceivedRequest;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);

    const cases = [
      { delivery: asDelivery(changed), secrets: [account.secret] },
      { delivery: asDelivery(redacted), secrets: [account.secret] },
      { delivery: asDelivery(during), secrets: [account.secret, rotated.body.webhook_secret as string] },
    ];
    for (const { delivery, secrets } of cases) {
      for (const secret of secrets) {
        for (const verifier of VERIFIERS) {
          expect(run(verifier, secret, delivery)).toEqual({ name: verifier.name, code: 0, out: 'verified' });
          const forged = { ...delivery, body: delivery.body.replace('"id"', '"id" ') };
          expect(run(verifier, secret, forged).code).toBe(1);
        }
      }
    }
  });
});
