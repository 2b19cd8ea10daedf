import { randomUUID } from 'node:crypto';
import { parseJson } from 'src/common/json';
import { createAccount, transition } from './helpers/factories';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * Metadata keys of one character written as an escape (`"\u00e9"`, `"\/"`, `"\""`) must be kept as
 * written: V8's JSON.parse in Node.js 24 (through 24.21.0) and 26 before 26.12.1 can read them as
 * `"\\"` once any request has used the key `"\\"` (src/common/json.ts). CI runs this on each tested
 * line, so on 24 it checks the workaround against the real defect.
 */
describe('one-character escaped metadata keys, after another request used the key "\\"', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({ APP_ROLE: 'all', WEBHOOK_RETRY_SCHEDULE: '200ms' });
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const create = (accountId: string, externalUserId: string, metadataJson: string) =>
    t.http
      .post('/api/v1/internal/kyc/verifications')
      .set('authorization', `Bearer ${t.internalToken}`)
      .set('content-type', 'application/json')
      .send(`{"account_id": "${accountId}", "external_user_id": "${externalUserId}", "metadata": ${metadataJson}}`);

  /**
   * V8 takes a shortcut when an object's keys follow a path it has seen once: with a first object
   * `{"<probe>": …, "\\": …}` seen, the next `{"<probe>": …, <escaped key>: …}` gets `"\\"` as its
   * second key on an affected runtime. Each case has a probe key of its own, so its path is fresh.
   */
  it.each([
    ['"\\u00e9"', 'é'],
    ['"\\/"', '/'],
    ['"\\u0041"', 'A'],
    ['"\\""', '"'],
  ])('stores, answers and delivers the key %s as %p', async (written, key) => {
    const probe = `probe-${randomUUID().slice(0, 8)}`;
    const account = await createAccount(t, { webhook_url: receiver.url });
    const trigger = await create(account.id, `${probe}-trigger`, `{"${probe}": "1", "\\\\": "backslash"}`);
    expect(trigger.status).toBe(201);
    expect(parseJson(trigger.text)).toMatchObject({ metadata: { [probe]: '1', '\\': 'backslash' } });

    const expected = { [probe]: '2', [key]: 'value' };
    const created = await create(account.id, probe, `{"${probe}": "2", ${written}: "value"}`);
    expect(created.status).toBe(201);
    // Parsed with the service's parser: this test process may have the defect too.
    const body = parseJson(created.text) as { id: string; metadata: unknown };
    expect(body.metadata).toEqual(expected);

    const detail = await t.http
      .get(`/api/v1/public/kyc/verifications/${body.id}`)
      .set('authorization', `Bearer ${account.secret}`);
    expect((parseJson(detail.text) as { metadata: unknown }).metadata).toEqual(expected);

    // The webhook is written from the row as pg reads it back (jsonb parsed in the service).
    await transition(t, body.id, { status: 'processing' });
    const requests = await receiver.waitFor(
      (all) => all.some((r) => r.body.includes(body.id) && r.body.includes('processing')),
      20_000,
      'the status change webhook',
    );
    const webhook = requests.find((r) => r.body.includes(body.id) && r.body.includes('processing'));
    const payload = parseJson(webhook?.body ?? '') as { data: { verification: { metadata: unknown } } };
    expect(payload.data.verification.metadata).toEqual(expected);
  });

  it('refuses such a body with one key given twice with different values (400, nothing created)', async () => {
    const account = await createAccount(t);
    const res = await create(account.id, 'json-keys-twice', '{"\\u00e9": "one", "\\u00e9": "two"}');
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    const list = await t.http.get('/api/v1/public/kyc/verifications').set('authorization', `Bearer ${account.secret}`);
    expect(list.body.data).toEqual([]);
  });
});
