import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { CreatedAccount, createAccount, createVerification, transition } from './helpers/factories';
import { ISO_MS, dbSnapshot, expectError } from './helpers/expect-error';
import { TestApp, startApp } from './helpers/test-app';
import { Reply, ReceivedRequest, WebhookReceiver, verifySignature } from './helpers/webhook-receiver';

const runFile = promisify(execFile);

const VERIFICATIONS = '/api/v1/public/kyc/verifications';
const EVENTS = '/api/v1/public/kyc/webhook-events';
const REDACTED_ID = '[redacted]';
const DETAIL_KEYS = [
  'applicant',
  'created_at',
  'decided_at',
  'document',
  'external_user_id',
  'id',
  'metadata',
  'object',
  'redacted_at',
  'rejection_reasons',
  'status',
  'status_history',
  'submitted_at',
  'updated_at',
  'version',
];

interface VerificationBody {
  id: string;
  status: string;
  version: number;
  external_user_id: string;
  updated_at: string;
  redacted_at: string | null;
  applicant: Record<string, string | null> | null;
  document: Record<string, string> | null;
  metadata: Record<string, string>;
  status_history?: { status: string; at: string; version: number }[];
  [key: string]: unknown;
}

interface EventJson {
  id: string;
  type: string;
  verification_id: string;
  delivery_status: string;
  payload: {
    id: string;
    type: string;
    timestamp: string;
    data: { previous_status?: string | null; reason?: string; verification: VerificationBody };
  };
}

/** Values that cannot occur by chance, one per personal field: what the searches and scans look for. */
interface Markers {
  first: string;
  last: string;
  /** Local part of the email given when the verification went to processing. */
  email: string;
  /** Local part of the email the rejection replaced it with. */
  laterEmail: string;
  dob: string;
  external: string;
  metaKey: string;
  metaValue: string;
  otherMetaValue: string;
}

const usedDates = new Set<string>();

/** A date of birth no other verification of this run has (1900–1949, far from any timestamp the service writes). */
function uniqueDate(): string {
  for (;;) {
    const day = randomBytes(2).readUInt16BE() % 18_262;
    const date = new Date(Date.UTC(1900, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
    if (!usedDates.has(date)) {
      usedDates.add(date);
      return date;
    }
  }
}

function markers(): Markers {
  const m = () => `zq${randomBytes(8).toString('hex')}`;
  return {
    first: m(),
    last: m(),
    email: m(),
    laterEmail: m(),
    dob: uniqueDate(),
    external: m(),
    metaKey: m(),
    metaValue: m(),
    otherMetaValue: m(),
  };
}

function needles(m: Markers): string[] {
  return [m.first, m.last, m.email, m.laterEmail, m.dob, m.external, m.metaKey, m.metaValue, m.otherMetaValue];
}

/** The markers that occur in `text`, so that a failure names the leaking field. */
function found(text: string, values: string[]): string[] {
  return values.filter((value) => text.includes(value));
}

/** The receiver's answer: the personal fields of the payload it got, so the attempt's excerpt holds them. */
function echo(request: ReceivedRequest): Reply {
  const payload = JSON.parse(request.body) as EventJson['payload'];
  const v = payload.data.verification;
  return { status: 200, body: JSON.stringify({ echo: [v.external_user_id, v.applicant, v.metadata] }) };
}

describe('redaction: POST /verifications/{id}/redact', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let account: CreatedAccount;
  let other: CreatedAccount;
  const queuePrefix = `${process.env.QUEUE_PREFIX}_redaction`;

  const get = (path: string, secret = account.secret) => t.http.get(path).set('authorization', `Bearer ${secret}`);
  const post = (path: string, body?: object, secret = account.secret) => {
    const req = t.http.post(path).set('authorization', `Bearer ${secret}`);
    return body === undefined ? req : req.send(body);
  };
  const redact = (id: string, body?: object, secret = account.secret) =>
    post(`${VERIFICATIONS}/${id}/redact`, body, secret);

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await startApp({
      QUEUE_PREFIX: queuePrefix,
      WEBHOOK_RETRY_SCHEDULE: '100ms,100ms',
      OUTBOX_SWEEP_INTERVAL_MS: '300',
      LOG_LEVEL: 'trace',
    });
    account = await createAccount(t, { webhook_url: receiver.url });
    other = await createAccount(t, { webhook_url: receiver.url });
  });

  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  beforeEach(() => receiver.respondWith(echo));

  /**
   * A verification carrying `m` in every personal field: created with name, external id and
   * metadata; the move to processing adds date of birth and email; the rejection adds a document
   * and replaces the email. Two events when it ends rejected (none for the creation).
   */
  async function seed(m: Markers, status: 'pending' | 'processing' | 'rejected' = 'rejected'): Promise<string> {
    const v = await createVerification(t, account.id, {
      external_user_id: m.external,
      applicant: { first_name: m.first, last_name: m.last },
      metadata: { plan: 'gold', [m.metaKey]: m.metaValue, note: m.otherMetaValue },
    });
    if (status === 'pending') return v.id;
    await transition(t, v.id, {
      status: 'processing',
      applicant: { date_of_birth: m.dob, email: `${m.email}@example.com` },
    });
    if (status === 'processing') return v.id;
    await transition(t, v.id, {
      status: 'rejected',
      rejection_reasons: ['document_expired', 'data_mismatch'],
      document: { type: 'passport', country: 'GB' },
      applicant: { email: `${m.laterEmail}@example.com` },
    });
    return v.id;
  }

  async function events(verificationId: string): Promise<EventJson[]> {
    const res = await get(`${EVENTS}?verification_id=${verificationId}&limit=100`);
    expect(res.status).toBe(200);
    return res.body.data as EventJson[];
  }

  async function waitForEvents(
    verificationId: string,
    predicate: (list: EventJson[]) => boolean,
    what: string,
  ): Promise<EventJson[]> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const list = await events(verificationId);
      if (predicate(list)) return list;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(list)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const delivered = (verificationId: string, count: number) =>
    waitForEvents(
      verificationId,
      (list) => list.length === count && list.every((e) => e.delivery_status === 'delivered'),
      `${count} delivered events of ${verificationId}`,
    );

  async function excerpts(verificationId: string): Promise<{ type: string; response_body: string | null }[]> {
    const { rows } = await t.db.query(
      `SELECT e.type, a.response_body FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
        WHERE e.verification_id = $1 ORDER BY a.at, e.id`,
      [verificationId],
    );
    return rows as { type: string; response_body: string | null }[];
  }

  /** The verification row (its generated search column too), its events' bodies and its attempts' excerpts. */
  async function rowState(verificationId: string): Promise<Record<string, unknown>> {
    const { rows } = await t.db.query(
      `SELECT row_to_json(v)::text AS verification,
              (SELECT json_agg(json_build_array(e.id, e.type, e.body, e.redacted_at) ORDER BY e.id)
                 FROM webhook_events e WHERE e.verification_id = v.id)::text AS events,
              (SELECT json_agg(json_build_array(a.event_id, a.number, a.response_body) ORDER BY a.event_id, a.number)
                 FROM webhook_attempts a JOIN webhook_events e ON e.id = a.event_id
                WHERE e.verification_id = v.id)::text AS excerpts
         FROM verifications v WHERE v.id = $1`,
      [verificationId],
    );
    expect(rows).toHaveLength(1);
    return rows[0] as Record<string, unknown>;
  }

  async function redactedEventCount(verificationId: string): Promise<number> {
    const { rows } = await t.db.query(
      `SELECT count(*)::int AS n FROM webhook_events WHERE verification_id = $1 AND type = 'verification.redacted'`,
      [verificationId],
    );
    return (rows[0] as { n: number }).n;
  }

  function withoutHistory(body: VerificationBody): VerificationBody {
    const { status_history: _history, ...rest } = body;
    return rest;
  }

  it('erases the personal fields and keeps the decision record; detail, list and an updated_from sync show it', async () => {
    const m = markers();
    const id = await seed(m);
    const before = (await get(`${VERIFICATIONS}/${id}`)).body as VerificationBody;
    expect(before).toMatchObject({
      status: 'rejected',
      version: 3,
      external_user_id: m.external,
      applicant: { first_name: m.first, last_name: m.last, date_of_birth: m.dob, email: `${m.laterEmail}@example.com` },
      document: { type: 'passport', country: 'GB' },
      metadata: { plan: 'gold', [m.metaKey]: m.metaValue, note: m.otherMetaValue },
      rejection_reasons: ['document_expired', 'data_mismatch'],
      redacted_at: null,
    });
    expect(before.status_history).toHaveLength(3);

    const started = Date.now();
    const res = await redact(id);
    const ended = Date.now();
    expect(res.status).toBe(200);
    const body = res.body as VerificationBody;
    expect(Object.keys(body).sort()).toEqual(DETAIL_KEYS);
    expect(body.redacted_at).toMatch(ISO_MS);
    expect(body).toEqual({
      ...before,
      external_user_id: REDACTED_ID,
      applicant: null,
      document: null,
      metadata: {},
      redacted_at: body.redacted_at,
      updated_at: body.redacted_at,
    });
    const at = Date.parse(body.redacted_at as string);
    expect(at).toBeGreaterThanOrEqual(started);
    expect(at).toBeLessThanOrEqual(ended);
    expect(at).toBeGreaterThan(Date.parse(before.updated_at));

    const detail = await get(`${VERIFICATIONS}/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(body);

    const list = await get(`${VERIFICATIONS}?limit=100`);
    expect(list.status).toBe(200);
    expect((list.body.data as VerificationBody[]).find((v) => v.id === id)).toEqual(withoutHistory(body));

    // A client that synced right after the rejection sees the redaction as a change.
    const since = new Date(Date.parse(before.updated_at) + 1).toISOString();
    const sync = await get(`${VERIFICATIONS}?updated_from=${since}&limit=100`);
    expect(sync.status).toBe(200);
    expect((sync.body.data as VerificationBody[]).filter((v) => v.id === id)).toEqual([withoutHistory(body)]);
  });

  it('rewrites every event payload, drops their response excerpts and adds one signed verification.redacted event', async () => {
    const m = markers();
    const id = await seed(m);
    const old = await delivered(id, 2);
    const oldExcerpts = await excerpts(id);
    expect(oldExcerpts).toHaveLength(2);
    for (const row of oldExcerpts) expect(row.response_body).toContain(m.first);

    const res = await redact(id);
    expect(res.status).toBe(200);
    const redacted = res.body as VerificationBody;

    const after = await events(id);
    expect(after).toHaveLength(3);
    const news = after.filter((e) => e.type === 'verification.redacted');
    expect(news).toHaveLength(1);
    const [event] = news;
    expect(event.payload).toEqual({
      id: event.id,
      type: 'verification.redacted',
      timestamp: expect.stringMatching(ISO_MS),
      data: { reason: 'client_request', verification: withoutHistory(redacted) },
    });

    for (const before of old) {
      const now = after.find((e) => e.id === before.id) as EventJson;
      expect(now.payload).toEqual({
        ...before.payload,
        data: {
          ...before.payload.data,
          verification: {
            ...before.payload.data.verification,
            external_user_id: REDACTED_ID,
            applicant: null,
            document: null,
            metadata: {},
            redacted_at: redacted.redacted_at,
          },
        },
      });
    }
    // Each event keeps its own change: status, version and previous status as at that change.
    expect(
      after
        .filter((e) => e.type === 'verification.status_changed')
        .map((e) => [
          e.payload.data.previous_status,
          e.payload.data.verification.status,
          e.payload.data.verification.version,
        ]),
    ).toEqual([
      ['processing', 'rejected', 3],
      ['pending', 'processing', 2],
    ]);
    expect(found(JSON.stringify(after), needles(m))).toEqual([]);

    const [delivery] = await receiver.waitForCount(event.id, 1);
    expect(delivery.headers['webhook-id']).toBe(event.id);
    expect(verifySignature(account.secret, delivery)).toEqual(event.payload);

    const now = await excerpts(id);
    expect(now.filter((row) => row.type === 'verification.status_changed')).toEqual([
      { type: 'verification.status_changed', response_body: null },
      { type: 'verification.status_changed', response_body: null },
    ]);
  });

  it('redelivers an older event with its redacted payload, the same webhook-id and a fresh signature', async () => {
    const m = markers();
    const id = await seed(m);
    const old = await delivered(id, 2);
    const older = old.find((e) => e.payload.data.verification.status === 'processing') as EventJson;
    const [first] = receiver.for(older.id);
    expect(found(first.body, needles(m))).toEqual([
      m.first,
      m.last,
      m.email,
      m.dob,
      m.external,
      m.metaKey,
      m.metaValue,
      m.otherMetaValue,
    ]);

    expect((await redact(id)).status).toBe(200);
    const stored = (await get(`${EVENTS}/${older.id}`)).body as EventJson;
    expect(stored.payload.data.verification.redacted_at).toMatch(ISO_MS);

    const res = await post(`${EVENTS}/${older.id}/redeliver`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: older.id, delivery_status: 'pending', payload: stored.payload });

    const requests = await receiver.waitForCount(older.id, 2);
    const again = requests[1];
    expect(again.headers['webhook-id']).toBe(older.id);
    expect(again.body).not.toBe(first.body);
    expect(verifySignature(account.secret, again)).toEqual(stored.payload);
    expect(found(again.body, needles(m))).toEqual([]);
    await waitForEvents(
      id,
      (list) => list.every((e) => e.delivery_status === 'delivered'),
      'the redelivery to be recorded',
    );
  });

  it('answers 404 to another account and refuses bad input, changing nothing', async () => {
    const m = markers();
    const id = await seed(m);
    await delivered(id, 2);
    const snapshot = await dbSnapshot(t.db);
    const state = await rowState(id);

    const foreign = await redact(id, undefined, other.secret);
    expectError(foreign, 404, 'not_found');
    const unknown = await redact(randomUUID());
    expectError(unknown, 404, 'not_found');
    expect({ ...foreign.body.error, request_id: null }).toEqual({ ...unknown.body.error, request_id: null });

    expectError(await redact('not-a-uuid'), 400, 'validation_failed');
    expectError(await redact(id, { reason: 'x' }), 400, 'validation_failed', 'reason');
    expectError(await post(`${VERIFICATIONS}/${id}/redact?reason=x`), 400, 'validation_failed', 'reason');

    const path = `${VERIFICATIONS}/${id}/redact`;
    const credentials = [
      undefined,
      `Bearer whsec_${randomBytes(32).toString('base64')}`,
      'Bearer not-a-secret',
      `Bearer ${t.internalToken}`,
      `Bearer ${t.adminToken}`,
    ];
    for (const credential of credentials) {
      const req = t.http.post(path);
      const res = await (credential === undefined ? req : req.set('authorization', credential));
      expectError(res, 401, 'unauthorized');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }

    expect(await dbSnapshot(t.db)).toEqual(snapshot);
    expect(await rowState(id)).toEqual(state);
    expect(await redactedEventCount(id)).toBe(0);
    const detail = await get(`${VERIFICATIONS}/${id}`);
    expect(detail.body).toMatchObject({ external_user_id: m.external, redacted_at: null });
  });

  it('is idempotent: a second redaction answers the same body and creates no event', async () => {
    const id = await seed(markers());
    const first = await redact(id);
    expect(first.status).toBe(200);
    await delivered(id, 3);
    const snapshot = await dbSnapshot(t.db);
    const state = await rowState(id);

    const second = await redact(id, {});
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(second.body.updated_at).toBe(first.body.redacted_at);
    expect(await redactedEventCount(id)).toBe(1);
    expect(await dbSnapshot(t.db)).toEqual(snapshot);
    expect(await rowState(id)).toEqual(state);
  });

  it('redacts once when many requests race: identical answers, one verification.redacted event', async () => {
    const id = await seed(markers());
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => redact(id, i % 2 ? {} : undefined)));
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200]);
    for (const res of answers) expect(res.body).toEqual(answers[0].body);
    expect(await redactedEventCount(id)).toBe(1);
  });

  it.each([
    ['pending', { status: 'processing' }],
    ['processing', { status: 'approved' }],
    ['processing', { status: 'rejected', rejection_reasons: ['other'] }],
    ['rejected', { status: 'processing' }],
  ] as const)(
    'refuses any move of a redacted %s verification (to %o) with 409, changing nothing',
    async (status, move) => {
      const id = await seed(markers(), status);
      const res = await redact(id, {});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status, redacted_at: expect.stringMatching(ISO_MS) });
      // Its status changes and the redaction, all delivered: nothing moves behind the comparison.
      await delivered(id, res.body.version as number);
      const snapshot = await dbSnapshot(t.db);
      const state = await rowState(id);

      const refused = await t.http
        .post(`/api/v1/internal/kyc/verifications/${id}/transitions`)
        .set('authorization', `Bearer ${t.internalToken}`)
        .send({ ...move, expected_version: res.body.version, applicant: { first_name: 'zqnew' } });
      expectError(refused, 409, 'invalid_transition');

      expect(await dbSnapshot(t.db)).toEqual(snapshot);
      expect(await rowState(id)).toEqual(state);
      expect((await get(`${VERIFICATIONS}/${id}`)).body).toEqual(res.body);
    },
  );

  it('leaves nothing for q or external_user_id to find, while another verification is still found', async () => {
    const m = markers();
    const c = markers();
    const id = await seed(m);
    const controlId = await seed(c);
    const searches = (x: Markers) => [
      `q=${x.first.slice(2, 12)}`,
      `q=${x.last.slice(5)}`,
      `q=${encodeURIComponent(`${x.first} ${x.last}`)}`,
      `q=${encodeURIComponent(`${x.laterEmail.slice(4)}@example`)}`,
      `q=${x.external.slice(3, 15)}`,
      `external_user_id=${x.external}`,
    ];
    const find = async (query: string) => {
      const res = await get(`${VERIFICATIONS}?${query}&limit=100`);
      expect(res.status).toBe(200);
      return (res.body.data as VerificationBody[]).map((v) => v.id);
    };

    for (const query of searches(m)) expect({ query, ids: await find(query) }).toEqual({ query, ids: [id] });
    expect((await redact(id)).status).toBe(200);
    for (const query of searches(m)) expect({ query, ids: await find(query) }).toEqual({ query, ids: [] });
    for (const query of searches(c)) expect({ query, ids: await find(query) }).toEqual({ query, ids: [controlId] });
  });

  it('keeps no response excerpt of an attempt that was in flight while the verification was redacted', async () => {
    const m = markers();
    receiver.respondWith((request) => ({ ...echo(request), delayMs: request.body.includes(m.first) ? 2_000 : 0 }));
    const id = await seed(m, 'processing');
    const [event] = await events(id);
    const [request] = await receiver.waitForCount(event.id, 1);
    expect(request.body).toContain(m.first);

    expect((await redact(id)).status).toBe(200);
    const { rows } = await t.db.query(`SELECT delivery_status, attempt_count FROM webhook_events WHERE id = $1`, [
      event.id,
    ]);
    expect(rows).toEqual([{ delivery_status: 'pending', attempt_count: 0 }]);

    await delivered(id, 2);
    const rowsAfter = await excerpts(id);
    expect(rowsAfter.filter((row) => row.type === 'verification.status_changed')).toEqual([
      { type: 'verification.status_changed', response_body: null },
    ]);
    expect(found(JSON.stringify(rowsAfter), needles(m))).toEqual([]);
  });

  it('leaves no byte of the erased values in PostgreSQL, in Redis or in the logs', async () => {
    const m = markers();
    const c = markers();
    const id = await seed(m);
    const controlId = await seed(c);
    await delivered(id, 2);
    await delivered(controlId, 2);
    for (const row of await excerpts(id)) expect(found(row.response_body ?? '', needles(m)).length).toBeGreaterThan(0);

    expect((await redact(id)).status).toBe(200);
    const after = await delivered(id, 3);

    const { stdout: dump } = await runFile(
      '/usr/bin/pg_dump',
      ['--data-only', `--dbname=${process.env.DATABASE_URL}`],
      {
        maxBuffer: 512 * 1024 * 1024,
      },
    );
    for (const event of after) expect(dump).toContain(event.id);
    expect(found(dump, needles(m))).toEqual([]);
    expect(found(dump, needles(c))).toEqual(needles(c));
    // pg_dump leaves out generated columns: the search data behind q is read directly.
    const { rows } = await t.db.query(`SELECT id, search_text FROM verifications WHERE id = ANY($1::uuid[])`, [
      [id, controlId],
    ]);
    const search = new Map((rows as { id: string; search_text: string }[]).map((row) => [row.id, row.search_text]));
    expect(found(search.get(id) ?? '', needles(m))).toEqual([]);
    expect(found(search.get(controlId) ?? '', needles(c))).toEqual([c.first, c.last, c.laterEmail, c.external]);

    const redis = new Redis(process.env.REDIS_URL as string, { maxRetriesPerRequest: 1 });
    const stored: string[] = [];
    try {
      let cursor = '0';
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) {
          const type = await redis.type(key);
          if (type === 'string') stored.push(key, (await redis.get(key)) ?? '');
          else if (type === 'hash') stored.push(key, JSON.stringify(await redis.hgetall(key)));
          else if (type === 'list') stored.push(key, ...(await redis.lrange(key, 0, -1)));
          else if (type === 'set') stored.push(key, ...(await redis.smembers(key)));
          else if (type === 'zset') stored.push(key, ...(await redis.zrange(key, 0, -1)));
          else if (type !== 'none') throw new Error(`unexpected Redis type ${type} of ${key}`);
        }
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
    const queued = stored.join('\n');
    for (const event of after) expect(queued).toContain(`${event.id}:1`);
    expect(found(queued, needles(m))).toEqual([]);

    const log = t.output.join('');
    expect(log).toContain('/api/v1/public/kyc/verifications/:id/redact');
    expect(found(log, needles(m))).toEqual([]);
  });
});
