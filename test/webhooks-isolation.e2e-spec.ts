import { createAccount, createVerification, transition } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

interface AttemptRow {
  response_status: number | null;
  error: string | null;
}

async function waitForFailed(
  t: TestApp,
  verificationId: string,
  timeoutMs = 20_000,
): Promise<{ id: string; last_error: string; attempts: AttemptRow[] }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.db.query(
      `SELECT id, delivery_status, last_error FROM webhook_events WHERE verification_id = $1`,
      [verificationId],
    );
    const row = res.rows[0];
    if (row?.delivery_status === 'failed') {
      const attempts = await t.db.query(
        'SELECT response_status, error FROM webhook_attempts WHERE event_id = $1 ORDER BY number',
        [row.id],
      );
      return { id: row.id, last_error: row.last_error, attempts: attempts.rows };
    }
    if (Date.now() > deadline)
      throw new Error(`event of ${verificationId} is ${row?.delivery_status}, expected failed`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('SSRF: private targets are refused at connect time', () => {
  let guarded: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    guarded = await startApp({
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_ssrf`,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false',
      WEBHOOK_RETRY_SCHEDULE: '100ms',
      WEBHOOK_TIMEOUT_MS: '3000',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
  });

  afterAll(async () => {
    await guarded.close();
    await receiver.close();
  });

  it.each([
    ['127.0.0.1 (a live receiver)', () => receiver.url],
    ['localhost, resolved at connect time', () => receiver.urlWithHost('localhost')],
    ['[::1]', () => receiver.urlWithHost('[::1]')],
    ['10.0.0.1', () => 'http://10.0.0.1/hook'],
    ['169.254.169.254', () => 'http://169.254.169.254/latest/meta-data'],
  ])('refuses %s and records each attempt as blocked', async (_name, url) => {
    const account = await createAccount(guarded, { webhook_url: url() });
    const v = await createVerification(guarded, account.id);
    await transition(guarded, v.id, { status: 'processing' });
    const event = await waitForFailed(guarded, v.id);
    expect(event.last_error).toBe('blocked: private address');
    expect(event.attempts).toEqual([
      { response_status: null, error: 'blocked: private address' },
      { response_status: null, error: 'blocked: private address' },
    ]);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('noisy neighbours', () => {
  let t: TestApp;
  let hanging: WebhookReceiver;
  let healthy: WebhookReceiver;

  beforeAll(async () => {
    hanging = await WebhookReceiver.start();
    healthy = await WebhookReceiver.start();
    hanging.respondWith({ hang: true });
    t = await startApp({
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_neighbours`,
      WEBHOOK_CONCURRENCY: '5',
      WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '2',
      WEBHOOK_TIMEOUT_MS: '15000',
      WEBHOOK_RETRY_SCHEDULE: '200ms',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
    });
  });

  afterAll(async () => {
    await hanging.close();
    await t.close();
    await healthy.close();
  });

  it("one account's hanging endpoint does not delay another account's deliveries past a second", async () => {
    const slow = await createAccount(t, { webhook_url: hanging.url });
    const fast = await createAccount(t, { webhook_url: healthy.url });
    const queued = await Promise.all(Array.from({ length: 20 }, () => createVerification(t, slow.id)));
    await Promise.all(queued.map((v) => transition(t, v.id, { status: 'processing' })));
    await hanging.waitFor((requests) => requests.length >= 2);

    const v = await createVerification(t, fast.id);
    await transition(t, v.id, { status: 'processing' });
    const [event] = (await t.db.query('SELECT id FROM webhook_events WHERE verification_id = $1', [v.id])).rows as {
      id: string;
    }[];
    await healthy.waitForCount(event.id, 1, 10_000);
    // An ordering, not a stopwatch: the healthy account's event arrived while both of the hanging
    // account's attempts were still open (they last 15 s), so it never waited behind them.
    const finished = await t.db.query(
      `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
        WHERE e.account_id = $1`,
      [slow.id],
    );
    expect(finished.rows[0].n).toBe(0);
    // The hanging account never had more than its 2 slots in flight.
    expect(hanging.requests.length).toBe(2);
  });
});
