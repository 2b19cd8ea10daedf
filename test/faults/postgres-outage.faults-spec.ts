import type { Pool } from 'pg';
import { TcpProxy, databaseServer, startTcpProxy } from '../helpers/ops-infra';
import { TestApp, startApp } from '../helpers/test-app';
import {
  ApiClient,
  CountingReceiver,
  FAST_DELIVERY,
  figures,
  pool,
  report,
  runDb,
  sleep,
  tokens,
  waitForDeliveries,
  waitUntil,
} from './harness';

const VERIFICATIONS = 100;
const OUTAGE_MS = 6_000;
/** The contract's "503 quickly": an upper bound, not a benchmark. */
const FAST_MS = 3_000;

describe('PostgreSQL unreachable (a TCP proxy in between is cut, then restored)', () => {
  const receiver = new CountingReceiver();
  let proxy: TcpProxy;
  let app: TestApp | undefined;
  let db: Pool;

  beforeAll(async () => {
    await receiver.start();
    proxy = await startTcpProxy(databaseServer().port, databaseServer().host);
    db = runDb();
  });

  afterAll(async () => {
    await app?.close();
    await proxy.close();
    await receiver.stop();
    await db.end();
  });

  it('answers 503 fast on every API route family while it is down and recovers without a restart', async () => {
    const url = new URL(process.env.DATABASE_URL as string);
    url.host = `127.0.0.1:${proxy.port}`;
    app = await startApp({
      ...FAST_DELIVERY,
      DATABASE_URL: url.toString(),
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_pg`,
      APP_ROLE: 'all',
    });
    const client = new ApiClient(app.url, tokens());
    const account = await client.createAccount('pg-outage', receiver.url);
    const verifications = await pool(
      Array.from({ length: VERIFICATIONS }, (_, i) => i),
      8,
      (i) => client.createVerification(account.id, `pg-outage-${i}`),
    );
    const { admin, internal } = tokens();
    const probes: Array<[string, string, string, unknown?]> = [
      ['GET', '/api/v1/public/kyc/verifications', account.secret],
      ['GET', `/api/v1/public/kyc/verifications/${verifications[0]}`, account.secret],
      ['GET', '/api/v1/public/kyc/webhook-events', account.secret],
      [
        'POST',
        `/api/v1/internal/kyc/verifications/${verifications[0]}/transitions`,
        internal,
        { status: 'processing' },
      ],
      [
        'POST',
        '/api/v1/internal/kyc/verifications',
        internal,
        { account_id: account.id, external_user_id: 'during-outage' },
      ],
      ['GET', `/api/v1/admin/accounts/${account.id}`, admin],
    ];

    // A steady stream of transitions runs across the outage; a 503 is retried later, as a client would.
    const started = Date.now();
    let cutAt = 0;
    let restoredAt = 0;
    const outage = (async () => {
      await sleep(2_000);
      await proxy.cut();
      cutAt = Date.now() - started;
      const answers: { status: number; code: unknown; ms: number }[] = [];
      for (let round = 0; round < 3; round += 1) {
        for (const [method, path, token, body] of probes) {
          const at = Date.now();
          const res = await client.call(method, path, token, body);
          answers.push({
            status: res.status,
            code: (res.body.error as { code?: unknown } | undefined)?.code,
            ms: Date.now() - at,
          });
        }
      }
      await sleep(Math.max(0, OUTAGE_MS - (Date.now() - started - cutAt)));
      await proxy.restore();
      restoredAt = Date.now() - started;
      return answers;
    })();
    const streamed = await pool(verifications, 4, async (id, index) => {
      const due = started + index * 100;
      if (due > Date.now()) await sleep(due - Date.now());
      return client.transition(id, 'processing');
    });
    const answers = await outage;

    const slowest = Math.max(...answers.map((a) => a.ms));
    expect(answers.filter((a) => a.status !== 503 || a.code !== 'service_unavailable')).toEqual([]);
    expect(slowest).toBeLessThan(FAST_MS);

    await waitUntil(
      async () => (await client.call('GET', '/api/v1/public/kyc/verifications', account.secret)).status === 200,
      20_000,
      'the list route to recover',
    );
    const recoveredAfterMs = Date.now() - started - restoredAt;
    const refused = verifications.filter((_, i) => streamed[i] !== 200);
    const retried = await pool(refused, 4, (id) => client.transition(id, 'processing'));
    // A 503 may hide a commit whose answer was lost with the connection: the retry then sees 409.
    expect(retried.filter((status) => status !== 200 && status !== 409)).toEqual([]);
    const versions = await db.query<{ changes: number }>(
      'SELECT sum(version - 1)::int AS changes FROM verifications WHERE account_id = $1',
      [account.id],
    );
    const changes = versions.rows[0].changes;
    expect(changes).toBe(VERIFICATIONS);

    await waitForDeliveries(db, [account.id], changes, 60_000);
    const result = await figures(db, [account.id], receiver, {
      status_changes: changes,
      refused_503_during_outage: streamed.filter((status) => status === 503).length,
      other_statuses_during_stream: streamed.filter((status) => status !== 200 && status !== 503).length,
      probes_503: answers.length,
      slowest_503_ms: slowest,
      outage_s: `${(cutAt / 1000).toFixed(1)}-${(restoredAt / 1000).toFixed(1)}`,
      recovered_after_restore_ms: recoveredAfterMs,
    });
    report('postgres-unreachable', result);
    expect(result.created).toBe(changes);
    expect(result.lost).toBe(0);
  });
});
