import type { Pool } from 'pg';
import { TestApp, startApp } from '../helpers/test-app';
import {
  ApiClient,
  CountingReceiver,
  FAST_DELIVERY,
  figures,
  pool,
  report,
  runDb,
  tokens,
  waitForDeliveries,
  waitUntil,
} from './harness';

const EVENTS = 300;
const TIMEOUT_MS = 5_000;

describe('SIGTERM during deliveries', () => {
  const receiver = new CountingReceiver();
  const env = {
    ...FAST_DELIVERY,
    QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_term`,
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  };
  let app: TestApp | undefined;
  let db: Pool;

  beforeAll(async () => {
    await receiver.start();
    db = runDb();
  });

  afterAll(async () => {
    await app?.close();
    await receiver.stop();
    await db.end();
  });

  it('finishes and records the deliveries in flight, exits 0 within the time-out, and loses nothing', async () => {
    app = await startApp({ ...env, APP_ROLE: 'all' });
    receiver.reply = { status: 200, delayMs: 800 };
    const client = new ApiClient(app.url, tokens());
    const accounts = await Promise.all(
      Array.from({ length: 5 }, (_, i) => client.createAccount(`sigterm ${i}`, receiver.url)),
    );
    const accountIds = accounts.map((a) => a.id);
    const verifications = await pool(
      Array.from({ length: EVENTS }, (_, i) => i),
      8,
      (i) => client.createVerification(accountIds[i % 5], `sigterm-${i}`),
    );
    const statuses = await pool(verifications, 8, (id) => client.transition(id, 'processing'));
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    await waitUntil(() => receiver.inFlight >= 20, 20_000, 'deliveries in flight');
    const inFlightAtSigterm = receiver.inFlight;
    const sentAt = Date.now();
    const exited = new Promise<number | null>((resolve) => app?.process.once('exit', (code) => resolve(code)));
    app.process.kill('SIGTERM');
    const code = await exited;
    const exitMs = Date.now() - sentAt;
    await app.db.end();
    app = undefined;

    // Every delivery the receiver answered before the exit was recorded as delivered.
    const answered = [...receiver.delivered.keys()];
    const recorded = await db.query<{ id: string; delivery_status: string }>(
      'SELECT id, delivery_status FROM webhook_events WHERE id = ANY($1::uuid[])',
      [answered],
    );
    const unrecorded = recorded.rows.filter((row) => row.delivery_status !== 'delivered').map((row) => row.id);
    const answeredBeforeExit = answered.length;

    app = await startApp({ ...env, APP_ROLE: 'all' });
    receiver.reply = { status: 200, delayMs: 0 };
    await waitForDeliveries(db, accountIds, EVENTS, 60_000);
    const result = await figures(db, accountIds, receiver, {
      in_flight_at_sigterm: inFlightAtSigterm,
      delivered_before_exit: answeredBeforeExit,
      unrecorded_at_exit: unrecorded.length,
      exit_code: String(code),
      exit_ms: exitMs,
    });
    report('sigterm', result);
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(TIMEOUT_MS + 5_000);
    expect(unrecorded).toEqual([]);
    expect(result.created).toBe(EVENTS);
    expect(result.lost).toBe(0);
  });
});
