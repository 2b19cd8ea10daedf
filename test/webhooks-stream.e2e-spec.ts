import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { v7 as uuidv7 } from 'uuid';
import { expectError } from './helpers/expect-error';
import { OpenStream, STREAM_PATH, StreamedMessage, openStream } from './helpers/event-stream';
import { CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';
import { WebhookReceiver } from './helpers/webhook-receiver';

const EVENTS = '/api/v1/public/kyc/webhook-events';

describe('GET /api/v1/public/kyc/webhook-events/stream', () => {
  let receiver: WebhookReceiver;
  let a: TestApp;
  let b: TestApp;
  let account: CreatedAccount;
  let other: CreatedAccount;
  const streams: OpenStream[] = [];

  const open = async (options: Parameters<typeof openStream>[2] = {}, app = a, secret = account.secret) => {
    const stream = await openStream(app.url, secret, options);
    streams.push(stream);
    return stream;
  };

  /** One status change through the internal API of `app`: its event id, from the delivery log. */
  async function newEvents(count: number, app = a, owner = account): Promise<string[]> {
    const verifications = await Promise.all(Array.from({ length: count }, () => createVerification(app, owner.id)));
    for (const v of verifications) await transition(app, v.id, { status: 'processing' });
    const { rows } = await a.db.query<{ id: string }>(
      `SELECT id FROM webhook_events WHERE verification_id = ANY($1::uuid[]) ORDER BY created_at, id`,
      [verifications.map((v) => v.id)],
    );
    return rows.map((row) => row.id);
  }

  const ids = (messages: StreamedMessage[]): string[] => messages.map((m) => m.id);

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    a = await startApp({ STREAMS_PER_ACCOUNT: '2', QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_stream` });
    b = await startApp({ APP_ROLE: 'api', QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_stream` });
    account = await createAccount(a, { webhook_url: receiver.url });
    other = await createAccount(a, { webhook_url: receiver.url });
  });

  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await receiver?.close();
  });

  it('streams each new event as signed webhook headers and the exact stored body; webhooks go on as before', async () => {
    const before = await newEvents(1);
    const stream = await open();
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const [live] = await newEvents(1);
    const test = await a.http
      .post(`${EVENTS}/test`)
      .set('authorization', `Bearer ${account.secret}`)
      .send({ status: 'approved' });
    expect(test.status).toBe(202);
    const messages = await stream.waitForMessages(2);
    expect(ids(messages)).toEqual([live, test.body.id]);
    expect(ids(messages)).not.toContain(before[0]);
    for (const message of messages) {
      const { rows } = await a.db.query(`SELECT type, body, created_at FROM webhook_events WHERE id = $1`, [
        message.id,
      ]);
      expect(message.event).toBe(rows[0].type);
      expect(message.data).toEqual({
        id: message.id,
        type: rows[0].type,
        created_at: rows[0].created_at.toISOString(),
        headers: expect.any(Object),
        body: rows[0].body,
      });
      expect(Object.keys(message.data.headers).sort()).toEqual([
        'webhook-id',
        'webhook-signature',
        'webhook-timestamp',
      ]);
      expect(message.data.headers['webhook-id']).toBe(message.id);
      new Webhook(account.secret).verify(message.data.body, message.data.headers);
    }
    expect((JSON.parse(messages[1].data.body) as { test: boolean }).test).toBe(true);
    // A view: the endpoint still gets both, and they end delivered.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const { rows } = await a.db.query(`SELECT delivery_status FROM webhook_events WHERE id = ANY($1::uuid[])`, [
        ids(messages),
      ]);
      if (rows.every((row) => row.delivery_status === 'delivered')) break;
      if (Date.now() > deadline) throw new Error(`not delivered: ${JSON.stringify(rows)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  it('resumes after Last-Event-ID or since, oldest first, then live, with no gap and no duplicate at the seam', async () => {
    for (const resume of [(id: string) => ({ lastEventId: id }), (id: string) => ({ query: `?since=${id}` })]) {
      const earlier = await newEvents(4);
      const creating = newEvents(6);
      const stream = await open(resume(earlier[0]));
      const later = await creating;
      await stream.waitForMessages(3 + 6);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(ids(stream.messages)).toEqual([...earlier.slice(1), ...later]);
    }
  });

  it('refuses a bad resume point with 400 validation_failed', async () => {
    const [mine] = await newEvents(1);
    const [theirs] = await newEvents(1, a, other);
    const get = (query: string, lastEventId?: string) => {
      const req = a.http.get(`${STREAM_PATH}${query}`).set('authorization', `Bearer ${account.secret}`);
      return lastEventId === undefined ? req : req.set('last-event-id', lastEventId);
    };
    expectError(await get(`?since=${mine}`, mine), 400, 'validation_failed', 'since');
    expectError(await get(`?since=${theirs}`), 400, 'validation_failed', 'since');
    expectError(await get(`?since=${randomUUID()}`), 400, 'validation_failed', 'since');
    expectError(await get('?since=nope'), 400, 'validation_failed', 'since');
    expectError(await get('', theirs), 400, 'validation_failed', 'Last-Event-ID');
    expectError(await get('', 'nope'), 400, 'validation_failed', 'Last-Event-ID');
    expectError(await get('?after=1'), 400, 'validation_failed');
    expect((await a.http.get(STREAM_PATH)).status).toBe(401);
  });

  it('allows STREAMS_PER_ACCOUNT open streams per account on a process: one more is 429 with Retry-After', async () => {
    await open();
    const second = await open();
    const refused = await a.http.get(STREAM_PATH).set('authorization', `Bearer ${account.secret}`);
    expectError(refused, 429, 'rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect((await open({}, a, other.secret)).status).toBe(200);
    expect((await open({}, b)).status).toBe(200);
    second.close();
    await second.ended;
    const deadline = Date.now() + 5_000;
    let again: OpenStream;
    do {
      await new Promise((resolve) => setTimeout(resolve, 50));
      again = await open();
    } while (again.status === 429 && Date.now() < deadline);
    expect(again.status).toBe(200);
  });

  it('sends an event committed through one API process to a stream on another before the 3 s safety re-read (the 1 s p99 target is measured by bench:stream)', async () => {
    const stream = await open({}, b);
    const [id] = await newEvents(1, a);
    const committedAt = Date.now();
    const [message] = await stream.waitForMessages(1, 5_000);
    expect(message.id).toBe(id);
    expect(message.at - committedAt).toBeLessThan(2_000);
  });

  it('sends an event that commits after a newer one was already sent (created first, committed last)', async () => {
    const stream = await open();
    const late = uuidv7();
    const client = await a.db.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, last_error)
         VALUES ($1, $2, $3, 'verification.status_changed', $4, now(), 'failed', 'no_webhook_url')`,
        [late, account.id, randomUUID(), JSON.stringify({ id: late, late: true })],
      );
      // Created (now(): the transaction's start) after the stream opened and before the newer event.
      const [newer] = await newEvents(1);
      await stream.waitForMessages(1);
      expect(ids(stream.messages)).toEqual([newer]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    await stream.waitForMessages(2, 5_000);
    expect(ids(stream.messages)[1]).toBe(late);
  });

  it('recovers a wake-up that was never sent (an event committed by a process that died before announcing it): the safety re-read finds it', async () => {
    const stream = await open({}, b);
    const [template] = await newEvents(1);
    await stream.waitForMessages(1, 5_000);
    // Written straight into the log, as a process would leave it if it crashed between the commit
    // and its NOTIFY: no process announces this event.
    const id = uuidv7();
    await a.db.query(
      `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, delivered_at)
       SELECT $1, account_id, verification_id, type, body, clock_timestamp(), 'delivered', clock_timestamp()
         FROM webhook_events WHERE id = $2`,
      [id, template],
    );
    const [, message] = await stream.waitForMessages(2, 8_000);
    expect(message.id).toBe(id);
  });

  it('sends a keep-alive comment at least every 15 s', async () => {
    const stream = await open();
    const openedAt = Date.now();
    const deadline = openedAt + 15_000;
    while (stream.comments.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(stream.comments[0]?.text.trim()).toBe('keep-alive');
    expect(stream.comments[0].at - openedAt).toBeLessThanOrEqual(15_000);
  }, 30_000);

  it('ends a stream once its secret is rotated out (grace 0), on whichever process it is open', async () => {
    const rotated = await createAccount(a);
    const onA = await open({}, a, rotated.secret);
    const onB = await open({}, b, rotated.secret);
    const res = await a.http
      .post(`/api/v1/admin/accounts/${rotated.id}/secret/rotate`)
      .set('authorization', `Bearer ${a.adminToken}`)
      .send({ grace_period_seconds: 0 });
    expect(res.status).toBe(200);
    const answeredAt = Date.now();
    await Promise.all([onA.ended, onB.ended]);
    expect(Date.now() - answeredAt).toBeLessThan(3_000);
    expect((await open({}, b, res.body.webhook_secret)).status).toBe(200);
  });

  it('ends its streams at once on SIGTERM and does not delay the exit', async () => {
    const c = await startApp({ APP_ROLE: 'api' });
    const stream = await openStream(c.url, account.secret);
    expect(stream.status).toBe(200);
    const startedAt = Date.now();
    const code = await c.close();
    await stream.ended;
    expect(code).toBe(0);
    expect(Date.now() - startedAt).toBeLessThan(3_000);
  });
});
