import type { Test } from 'supertest';
import { type CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { waitFor } from './helpers/poll';
import { type TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

/**
 * Changes that race: an operator's and a client's PATCH at the same time each write only what they
 * name (neither reverts the other); a late answer from a URL the account has since left belongs to
 * that URL (it neither disables the endpoint nor counts in the new URL's health).
 */

const ENDPOINT = '/api/v1/public/kyc/webhook-endpoint';
const ADMIN = '/api/v1/admin/accounts';

describe('webhook endpoint: concurrent changes and late answers', () => {
  let t: TestApp;
  let oldUrl: WebhookReceiver;
  let newUrl: WebhookReceiver;

  const as = (account: CreatedAccount, req: Test) => req.set('authorization', `Bearer ${account.secret}`);
  const admin = (req: Test) => req.set('authorization', `Bearer ${t.adminToken}`);

  beforeAll(async () => {
    [oldUrl, newUrl] = await Promise.all([WebhookReceiver.start('/old'), WebhookReceiver.start('/new')]);
    t = await startApp({ WEBHOOK_RETRY_SCHEDULE: '200ms,200ms', LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await t?.close();
    await Promise.all([oldUrl?.close(), newUrl?.close()]);
  });

  it("the admin's PATCH {name} and the client's PATCH {url} at once never revert each other (rounds)", async () => {
    const account = await createAccount(t, { name: 'Round 0', webhook_url: 'https://r0.example/hook' });
    const outcomes: string[] = [];
    for (let round = 1; round <= 30; round += 1) {
      const name = `Round ${round}`;
      const url = `https://r${round}.example/hook`;
      const [renamed, moved] = await Promise.all([
        admin(t.http.patch(`${ADMIN}/${account.id}`)).send({ name }),
        as(account, t.http.patch(ENDPOINT)).send({ url }),
      ]);
      expect([renamed.status, moved.status]).toEqual([200, 200]);
      const now = await admin(t.http.get(`${ADMIN}/${account.id}`));
      outcomes.push(
        now.body.name === name && now.body.webhook_url === url
          ? 'kept'
          : `round ${round}: ${now.body.name}, ${now.body.webhook_url}`,
      );
    }
    expect(outcomes.filter((outcome) => outcome !== 'kept')).toEqual([]);
  });

  it('a late 410 or failure from the URL the account left neither disables nor marks the new one', async () => {
    const account = await createAccount(t, { webhook_url: oldUrl.url });
    oldUrl.respondWith({ status: 410, delayMs: 1_500 });
    newUrl.respondWith({ status: 200 });
    const verification = await createVerification(t, account.id);
    await transition(t, verification.id, { status: 'processing' });
    await oldUrl.waitFor(
      (all) => all.some((r) => r.body.includes(verification.id)),
      20_000,
      'the attempt to the old url',
    );
    const moved = await as(account, t.http.patch(ENDPOINT)).send({ url: newUrl.url });
    expect(moved.body).toMatchObject({ url: newUrl.url, status: 'enabled' });

    // The old URL's 410 is recorded on the event as what that attempt got...
    await waitFor(
      async () =>
        (
          await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
            WHERE e.verification_id = $1 AND a.response_status = 410`,
            [verification.id],
          )
        ).rows[0].n,
      (n) => n === 1,
      'the 410 to be recorded',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    // ...but the endpoint at its new URL stays enabled, its health untouched.
    const endpoint = await as(account, t.http.get(ENDPOINT));
    expect(endpoint.body).toMatchObject({
      url: newUrl.url,
      status: 'enabled',
      disabled_reason: null,
      health: { last_failure_at: null, failing_since: null, consecutive_failures: 0 },
    });
    // The next event goes to the new URL.
    const next = await createVerification(t, account.id);
    await transition(t, next.id, { status: 'processing' });
    await newUrl.waitFor((all) => all.some((r) => r.body.includes(next.id)), 20_000, 'the next event at the new url');

    // A failure (HTTP 500) from the old URL after a move counts nowhere either.
    const other = await createAccount(t, { webhook_url: oldUrl.url });
    oldUrl.respondWith({ status: 500, delayMs: 1_500 });
    const third = await createVerification(t, other.id);
    await transition(t, third.id, { status: 'processing' });
    await oldUrl.waitFor((all) => all.some((r) => r.body.includes(third.id)), 20_000, 'the attempt to the old url');
    await as(other, t.http.patch(ENDPOINT)).send({ url: newUrl.url });
    await waitFor(
      async () =>
        (
          await t.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
            WHERE e.verification_id = $1 AND a.response_status = 500`,
            [third.id],
          )
        ).rows[0].n,
      (n) => n >= 1,
      'the 500 to be recorded',
    );
    const health = await as(other, t.http.get(ENDPOINT));
    expect(health.body).toMatchObject({
      status: 'enabled',
      health: { last_failure_at: null, failing_since: null, consecutive_failures: 0 },
    });
  });
});
