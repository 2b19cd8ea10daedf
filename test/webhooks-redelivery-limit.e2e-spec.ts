import type { Test } from 'supertest';
import { expectError } from './helpers/expect-error';
import { type CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { metricValue, waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * REDELIVERIES_PER_HOUR: redeliveries (single and bulk) of one account are limited per hour, counted
 * in Redis across API processes; a call that would pass the limit is 429 `rate_limited` with
 * Retry-After and redelivers nothing; every redelivered event is counted in a metric.
 */

const EVENTS = '/api/v1/public/kyc/webhook-events';
const LIMIT = 5;

describe('REDELIVERIES_PER_HOUR', () => {
  let t: TestApp;
  let other: TestApp;
  let receiver: WebhookReceiver;
  const prefix = `${process.env.QUEUE_PREFIX}_redeliveries`;

  const as = (account: CreatedAccount, req: Test) => req.set('authorization', `Bearer ${account.secret}`);
  const cycles = async (account: CreatedAccount): Promise<number[]> =>
    (
      await t.db.query<{ cycle: number }>('SELECT cycle FROM webhook_events WHERE account_id = $1 ORDER BY id', [
        account.id,
      ])
    ).rows.map((row) => row.cycle);
  const allDelivered = (account: CreatedAccount) =>
    waitFor(
      async () =>
        (
          await t.db.query<{ status: string }>(
            'SELECT delivery_status AS status FROM webhook_events WHERE account_id = $1',
            [account.id],
          )
        ).rows.map((row) => row.status),
      (statuses) => statuses.length > 0 && statuses.every((status) => status === 'delivered'),
      "the account's events delivered",
    );

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    const env = { REDELIVERIES_PER_HOUR: String(LIMIT), QUEUE_PREFIX: prefix, LOG_LEVEL: 'warn' };
    t = await startApp(env);
    other = await startApp({ ...env, APP_ROLE: 'api' });
  });

  afterAll(async () => {
    await Promise.all([t?.close(), other?.close()]);
    await receiver?.close();
  });

  it('lets an account redeliver up to the limit, then refuses whole calls with 429 and Retry-After, on every process', async () => {
    const account = await createAccount(t, { webhook_url: receiver.url });
    for (let i = 0; i < 4; i += 1) {
      const verification = await createVerification(t, account.id);
      await transition(t, verification.id, { status: 'processing' });
    }
    await allDelivered(account);
    const before = metricValue(await (await fetch(`${t.url}/metrics`)).text(), 'webhook_redeliveries_total');

    const bulk = await as(account, t.http.post(`${EVENTS}/redeliver`)).send({ delivery_status: 'delivered' });
    expect(bulk.status).toBe(202);
    expect(bulk.body).toEqual({ object: 'redelivery', count: 4 });
    await allDelivered(account);
    const afterFirst = await cycles(account);
    expect(afterFirst).toEqual([2, 2, 2, 2]);

    // Four more would pass the limit (4 + 4 > 5): refused whole, nothing redelivered.
    const refused = await as(account, t.http.post(`${EVENTS}/redeliver`)).send({ delivery_status: 'delivered' });
    expectError(refused, 429, 'rate_limited');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3_000);
    expect(retryAfter).toBeLessThanOrEqual(3_600);
    expect(await cycles(account)).toEqual(afterFirst);

    // One more fits.
    const [first] = (
      await t.db.query<{ id: string }>('SELECT id FROM webhook_events WHERE account_id = $1 ORDER BY id LIMIT 1', [
        account.id,
      ])
    ).rows;
    const single = await as(account, t.http.post(`${EVENTS}/${first.id}/redeliver`));
    expect(single.status).toBe(202);
    await allDelivered(account);

    // The limit is used up on every API process.
    for (const app of [t, other]) {
      const over = await as(account, app.http.post(`${EVENTS}/${first.id}/redeliver`));
      expectError(over, 429, 'rate_limited');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(await cycles(account)).toEqual([3, 2, 2, 2]);

    // Another account has its own budget.
    const second = await createAccount(t, { webhook_url: receiver.url });
    const verification = await createVerification(t, second.id);
    await transition(t, verification.id, { status: 'processing' });
    await allDelivered(second);
    const theirs = await as(second, other.http.post(`${EVENTS}/redeliver`)).send({ delivery_status: 'delivered' });
    expect(theirs.body).toEqual({ object: 'redelivery', count: 1 });

    const metrics = await (await fetch(`${t.url}/metrics`)).text();
    expect(metricValue(metrics, 'webhook_redeliveries_total') - before).toBe(5);
  });
});
