import type { Pool } from 'pg';
import { TestApp, startApp } from '../helpers/test-app';
import { ReceivedRequest, WebhookReceiver, verifySignature } from '../helpers/webhook-receiver';
import {
  ApiClient,
  FAST_DELIVERY,
  StalledWatch,
  pool,
  report,
  runDb,
  sleep,
  tokens,
  waitUntil,
  watchStalled,
} from './harness';

const ENDPOINT = '/api/v1/public/kyc/webhook-endpoint';
const DELIVERY_LOG = '/api/v1/public/kyc/webhook-events';
/** Each verification makes two events (pending → processing → approved). */
const HELD_VERIFICATIONS = 250;
const HELD_EVENTS = 2 * HELD_VERIFICATIONS;
/**
 * The worker is SIGKILLed at these arrivals: while the request waits for its answer, a millisecond
 * after its 200 went out, and once its attempt is recorded delivered (the next one being let through).
 */
const KILLS = { inFlight: 150, answered: 300, recorded: 450 } as const;
type KillPoint = keyof typeof KILLS;
const ANSWER_MS = 5;
const RACING_HELD_VERIFICATIONS = 100;
const RACING_NEW_EVENTS = 50;

interface EventRow {
  id: string;
  delivery_status: string;
  cycle: number;
  cycle_attempts: number;
  attempt_count: number;
  next_attempt_at: Date | null;
}

interface Kill {
  point: KillPoint;
  /** Index in the receiver's requests of the last arrival before the worker died. */
  lastArrival: number;
  /** How many requests had arrived when its successor was spawned: later ones are the successor's. */
  arrivedAtRespawn: number;
  at: number;
  exited: Promise<void>;
}

/** The account's events in the order the service created them (the release's order). */
async function eventRows(db: Pool, accountId: string): Promise<EventRow[]> {
  const res = await db.query<EventRow>(
    `SELECT id, delivery_status, cycle, cycle_attempts, attempt_count, next_attempt_at FROM webhook_events
      WHERE account_id = $1 ORDER BY created_at, id`,
    [accountId],
  );
  return res.rows;
}

/** Requests per webhook-id, and the ids in the order of their first arrival. */
function arrivals(requests: ReceivedRequest[]): { counts: Map<string, number>; firstOrder: string[] } {
  const counts = new Map<string, number>();
  const firstOrder: string[] = [];
  for (const request of requests) {
    const id = String(request.headers['webhook-id']);
    if (!counts.has(id)) firstOrder.push(id);
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return { counts, firstOrder };
}

/** First arrivals behind one created later (out of order), and the pairs that arrived the wrong way round. */
function orderFigures(firstOrder: string[], created: string[]): { outOfOrder: number; inversions: number } {
  const rank = new Map(created.map((id, index) => [id, index]));
  const ranks = firstOrder.map((id) => rank.get(id) ?? -1);
  let outOfOrder = 0;
  let inversions = 0;
  let highest = -1;
  ranks.forEach((r, i) => {
    if (r < highest) outOfOrder += 1;
    highest = Math.max(highest, r);
    for (let j = 0; j < i; j += 1) if (ranks[j] > r) inversions += 1;
  });
  return { outOfOrder, inversions };
}

async function setEndpoint(client: ApiClient, secret: string, status: 'enabled' | 'disabled'): Promise<void> {
  const res = await client.call('PATCH', ENDPOINT, secret, { status });
  expect(res.status).toBe(200);
  expect(res.body.status).toBe(status);
}

/** Ids in the client's delivery log with one of `statuses`, every page. */
async function deliveryLogIds(client: ApiClient, secret: string, statuses: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const query: string = `delivery_status=${statuses}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await client.call('GET', `${DELIVERY_LOG}?${query}`, secret);
    expect(res.status).toBe(200);
    ids.push(...(res.body.data as { id: string }[]).map((event) => event.id));
    cursor = res.body.next_cursor as string | null;
  } while (cursor);
  return ids;
}

/** `count` verifications of the account, each moved pending → processing → approved; all answered 200. */
async function twoEventsEach(client: ApiClient, accountId: string, count: number, label: string): Promise<void> {
  const ids = await pool(
    Array.from({ length: count }, (_, i) => i),
    8,
    (i) => client.createVerification(accountId, `${label}-${i}`),
  );
  const statuses = [
    ...(await pool(ids, 8, (id) => client.transition(id, 'processing'))),
    ...(await pool(ids, 8, (id) => client.transition(id, 'approved'))),
  ];
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
}

describe('an endpoint enabled again: its held events released, oldest first, one at a time', () => {
  const prefix = `${process.env.QUEUE_PREFIX}_release`;
  const env = {
    ...FAST_DELIVERY,
    QUEUE_PREFIX: prefix,
    WEBHOOK_TIMEOUT_MS: '2000',
    OUTBOX_SWEEP_INTERVAL_MS: '300',
    WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: '1',
  };
  const receivers: WebhookReceiver[] = [];
  let api: TestApp | undefined;
  let worker: TestApp | undefined;
  let db: Pool;
  // Closed in afterAll too, so a failed run leaves no Redis connection holding Jest open.
  let stalled: StalledWatch | undefined;

  const startWorker = async (): Promise<TestApp> => (worker = await startApp({ ...env, APP_ROLE: 'worker' }));

  beforeAll(async () => {
    db = runDb();
    api = await startApp({ ...env, APP_ROLE: 'api' });
    await startWorker();
  });

  afterAll(async () => {
    await stalled?.close();
    await worker?.close();
    await api?.close();
    for (const receiver of receivers) await receiver.close();
    await db.end();
  });

  const heldAccount = async (
    label: string,
    verifications: number,
  ): Promise<{ client: ApiClient; receiver: WebhookReceiver; account: { id: string; secret: string } }> => {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    receiver.respondWith({ status: 200, delayMs: ANSWER_MS });
    const client = new ApiClient((api as TestApp).url, tokens());
    const account = await client.createAccount(label, receiver.url);
    await setEndpoint(client, account.secret, 'disabled');
    await twoEventsEach(client, account.id, verifications, label);
    const rows = await eventRows(db, account.id);
    expect(rows).toHaveLength(2 * verifications);
    expect(rows.filter((row) => row.delivery_status !== 'held' || row.next_attempt_at !== null)).toEqual([]);
    // Several sweeps pass: a held event stays held and nothing is sent.
    await sleep(1_500);
    const view = await client.call('GET', ENDPOINT, account.secret);
    expect(view.body).toMatchObject({ status: 'disabled', disabled_reason: 'client', held_count: 2 * verifications });
    expect(receiver.requests).toHaveLength(0);
    return { client, receiver, account };
  };

  /** After all arrived: every event delivered in one recorded attempt of a later cycle, nothing held or pending. */
  const expectAllDelivered = async (client: ApiClient, account: { id: string; secret: string }, total: number) => {
    await waitUntil(
      async () => (await eventRows(db, account.id)).every((row) => row.delivery_status === 'delivered'),
      30_000,
      'every event recorded delivered',
    );
    const rows = await eventRows(db, account.id);
    expect(rows).toHaveLength(total);
    expect(rows.filter((row) => row.cycle_attempts !== 1 || row.attempt_count !== 1)).toEqual([]);
    const view = await client.call('GET', ENDPOINT, account.secret);
    expect(view.body).toMatchObject({ status: 'enabled', held_count: 0 });
    expect(await deliveryLogIds(client, account.secret, 'held,pending,failed')).toEqual([]);
    expect(new Set(await deliveryLogIds(client, account.secret, 'delivered'))).toEqual(
      new Set(rows.map((row) => row.id)),
    );
    return rows;
  };

  it('500 held events, the worker SIGKILLed three times during the release: none lost, an extra arrival only for what a kill cut off', async () => {
    const { client, receiver, account } = await heldAccount('endpoint-release kill', HELD_VERIFICATIONS);
    const created = (await eventRows(db, account.id)).map((row) => row.id);
    stalled = await watchStalled(prefix);

    const kills: Kill[] = [];
    const kill = (point: KillPoint): void => {
      const dying = worker as TestApp;
      const lastArrival = receiver.requests.length - 1;
      kills.push({ point, lastArrival, arrivedAtRespawn: Infinity, at: Date.now(), exited: dying.kill() });
    };
    // What the dead worker can have had in flight: the last request it sent before the kill, and any
    // still on the wire then (they arrive after it, before its successor exists).
    const cutOff = (k: Kill): string[] =>
      receiver.requests.slice(k.lastArrival, k.arrivedAtRespawn).map((r) => String(r.headers['webhook-id']));
    const killOnceRecorded = async (eventId: string): Promise<void> => {
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const res = await db.query<{ s: string }>('SELECT delivery_status AS s FROM webhook_events WHERE id = $1', [
          eventId,
        ]);
        if (res.rows[0]?.s === 'delivered') break;
      }
      kill('recorded');
    };
    receiver.respondWith((request) => {
      const n = receiver.requests.length;
      if (n === KILLS.inFlight) {
        kill('inFlight');
        return { status: 200, delayMs: 1_000 };
      }
      if (n === KILLS.answered) setTimeout(() => kill('answered'), 1);
      if (n === KILLS.recorded) void killOnceRecorded(String(request.headers['webhook-id']));
      return { status: 200, delayMs: n === KILLS.answered || n === KILLS.recorded ? 0 : ANSWER_MS };
    });

    const enabledAt = Date.now();
    await setEndpoint(client, account.secret, 'enabled');
    for (const number of [1, 2, 3]) {
      await waitUntil(() => kills.length >= number, 120_000, `kill ${number}`, 10);
      await kills[number - 1].exited;
      kills[number - 1].arrivedAtRespawn = receiver.requests.length;
      await startWorker();
    }
    const distinct = (): number => arrivals(receiver.requests).counts.size;
    await receiver.waitFor(() => distinct() >= HELD_EVENTS, 120_000, `${HELD_EVENTS} distinct webhook-ids`);
    const releasedInMs = Date.now() - enabledAt;
    await expectAllDelivered(client, account, HELD_EVENTS);
    await sleep(1_000);
    await stalled.close();

    const { counts, firstOrder } = arrivals(receiver.requests);
    const duplicated = [...counts].filter(([, count]) => count > 1).map(([id]) => id);
    const extra = [...counts.values()].reduce((sum, count) => sum + count - 1, 0);
    const { outOfOrder, inversions } = orderFigures(firstOrder, created);
    const resent = (k: Kill): number => cutOff(k).filter((id) => (counts.get(id) ?? 0) > 1).length;
    const gaps = kills.map((k) => (receiver.requests.find((r) => r.at > k.at)?.at ?? NaN) - k.at);
    report('endpoint-release-sigkill', {
      held: HELD_EVENTS,
      arrived: counts.size,
      lost: created.filter((id) => !counts.has(id)).length,
      requests: receiver.requests.length,
      extra_arrivals: extra,
      kills: kills.length,
      cut_off_per_kill: kills.map((k) => cutOff(k).length).join('/'),
      stalled_jobs: stalled.ids.size,
      resent_by_kill_point: kills.map((k) => `${k.point}:${resent(k)}`).join('/'),
      next_arrival_after_kill_ms: gaps.join('/'),
      out_of_order: outOfOrder,
      inversions,
      released_in_s: (releasedInMs / 1000).toFixed(1),
    });

    for (const request of receiver.requests) verifySignature(account.secret, request);
    expect(created.filter((id) => !counts.has(id))).toEqual([]);
    expect([...counts.keys()].filter((id) => !created.includes(id))).toEqual([]);
    // The receiver always answers 200: a second arrival can only be the attempt a kill cut off.
    expect(kills.map((k) => k.point)).toEqual(['inFlight', 'answered', 'recorded']);
    expect(extra).toBeLessThanOrEqual(kills.length);
    expect(duplicated.filter((id) => !kills.some((k) => cutOff(k).includes(id)))).toEqual([]);
    // Its answer never reached the worker: it must be sent again, once.
    expect(counts.get(cutOff(kills[0])[0])).toBe(2);
    // One in flight at a time, and a killed one blocks the window until it is sent again.
    expect(firstOrder).toEqual(created);
  }, 300_000);

  it('new events made while the release starts: each delivered exactly once, none left held or pending', async () => {
    const { client, receiver, account } = await heldAccount('endpoint-release race', RACING_HELD_VERIFICATIONS);
    const fresh = await pool(
      Array.from({ length: RACING_NEW_EVENTS }, (_, i) => i),
      8,
      (i) => client.createVerification(account.id, `endpoint-release-race-new-${i}`),
    );

    const enabledAt = Date.now();
    const half = RACING_NEW_EVENTS / 2;
    const before = Promise.all(fresh.slice(0, half).map((id) => client.transition(id, 'processing')));
    const enabling = client.call('PATCH', ENDPOINT, account.secret, { status: 'enabled' });
    const after = Promise.all(fresh.slice(half).map((id) => client.transition(id, 'processing')));
    const [statusesBefore, enabled, statusesAfter] = await Promise.all([before, enabling, after]);
    expect([...statusesBefore, ...statusesAfter].filter((status) => status !== 200)).toEqual([]);
    expect(enabled.status).toBe(200);

    const total = 2 * RACING_HELD_VERIFICATIONS + RACING_NEW_EVENTS;
    const distinct = (): number => arrivals(receiver.requests).counts.size;
    await receiver.waitFor(() => distinct() >= total, 120_000, `${total} distinct webhook-ids`);
    const arrivedInMs = Date.now() - enabledAt;
    const rows = await expectAllDelivered(client, account, total);
    await sleep(1_000);

    const { counts } = arrivals(receiver.requests);
    const ids = rows.map((row) => row.id);
    const newRows = rows.slice(-RACING_NEW_EVENTS);
    report('endpoint-release-race', {
      held: 2 * RACING_HELD_VERIFICATIONS,
      new_events: RACING_NEW_EVENTS,
      new_held_then_released: newRows.filter((row) => row.cycle === 2).length,
      new_sent_directly: newRows.filter((row) => row.cycle === 1).length,
      arrived: counts.size,
      requests: receiver.requests.length,
      all_arrived_in_s: (arrivedInMs / 1000).toFixed(1),
    });
    expect(ids.filter((id) => !counts.has(id))).toEqual([]);
    expect([...counts].filter(([, count]) => count !== 1)).toEqual([]);
    expect(receiver.requests).toHaveLength(total);
  }, 180_000);
});
