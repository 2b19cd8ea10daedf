import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { webhookHeaders } from 'src/webhooks/outbox/webhook-signer';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

describe('webhookHeaders', () => {
  const at = new Date('2026-11-22T01:02:03.456Z');
  const body = JSON.stringify({ id: 'evt', type: 'verification.status_changed' });

  it('carries the Standard Webhooks headers of the attempt', () => {
    const headers = webhookHeaders('evt_1', at, body, [secret()]);
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('signs once per active secret, space-separated, each verifiable on its own', () => {
    const secrets = [secret(), secret()];
    const headers = webhookHeaders('evt_2', new Date(), body, secrets);
    const signatures = headers['webhook-signature'].split(' ');
    expect(signatures).toHaveLength(2);
    secrets.forEach((key, index) => {
      expect(() => new Webhook(key).verify(body, { ...headers, 'webhook-signature': signatures[index] })).not.toThrow();
      expect(() => new Webhook(key).verify(body, { ...headers, 'webhook-signature': signatures[1 - index] })).toThrow();
    });
  });

  it('matches HMAC-SHA256 over "<id>.<timestamp>.<body>" with the base64-decoded key', () => {
    const key = secret();
    const headers = webhookHeaders('evt_3', at, body, [key]);
    const expected = createHmac('sha256', Buffer.from(key.slice('whsec_'.length), 'base64'))
      .update(`evt_3.${headers['webhook-timestamp']}.${body}`)
      .digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
  });
});
