import { TcpProxy, databaseServer, startTcpProxy } from './helpers/ops-infra';
import { createAccount, createVerificationInStatus, transition } from './helpers/factories';
import { TestApp, startApp } from './helpers/test-app';

/**
 * No real replica here: DATABASE_READ_URLS names the same database through a TCP proxy, so
 * behaviour must be unchanged; the replica's connections carry an application_name of their own, so
 * pg_stat_activity shows that the reads use them, and cutting the proxy shows that reads degrade to
 * the primary instead of failing (a real replica and a failover are in test/scale and test/faults).
 */
const REPLICA_APP = 'kyc-test-replica';
describe('DATABASE_READ_URLS', () => {
  let proxy: TcpProxy;
  let t: TestApp;

  beforeAll(async () => {
    proxy = await startTcpProxy(databaseServer().port, databaseServer().host);
    const replica = new URL(process.env.DATABASE_URL as string);
    replica.host = `127.0.0.1:${proxy.port}`;
    replica.searchParams.set('application_name', REPLICA_APP);
    t = await startApp({
      DATABASE_READ_URLS: `${replica.toString()},${replica.toString()}`,
      RATE_LIMIT_PER_MINUTE: '0',
    });
  });

  afterAll(async () => {
    await t.close();
    await proxy.close();
  });

  it('serves list and detail reads from the replica pool, from the primary while the replica is down, and every write from DATABASE_URL', async () => {
    const account = await createAccount(t, { webhook_url: null });
    const auth = `Bearer ${account.secret}`;
    const v = await createVerificationInStatus(t, account.id, 'approved');
    const list = await t.http.get('/api/v1/public/kyc/verifications').set('authorization', auth);
    expect(list.status).toBe(200);
    expect(list.body.data.map((row: { id: string; version: number }) => [row.id, row.version])).toEqual([[v.id, 3]]);
    const detail = await t.http.get(`/api/v1/public/kyc/verifications/${v.id}`).set('authorization', auth);
    expect(detail.body.status_history.map((h: { status: string }) => h.status)).toEqual([
      'pending',
      'processing',
      'approved',
    ]);
    const events = await t.http.get('/api/v1/public/kyc/webhook-events').set('authorization', auth);
    expect(events.body.data).toHaveLength(2);
    const event = await t.http
      .get(`/api/v1/public/kyc/webhook-events/${events.body.data[0].id}`)
      .set('authorization', auth);
    expect(event.status).toBe(200);

    const replicaSessions = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1`,
      [REPLICA_APP],
    );
    expect(replicaSessions.rows[0].n).toBeGreaterThan(0);

    await proxy.cut();
    const reads = [
      '/api/v1/public/kyc/verifications',
      `/api/v1/public/kyc/verifications/${v.id}`,
      `/api/v1/public/kyc/verifications/${v.id}?min_version=3`,
      '/api/v1/public/kyc/webhook-events',
      `/api/v1/public/kyc/webhook-events/${events.body.data[0].id}`,
    ];
    for (let round = 0; round < 2; round += 1) {
      for (const path of reads) {
        const res = await t.http.get(path).set('authorization', auth);
        expect({ path, status: res.status }).toEqual({ path, status: 200 });
      }
    }
    const whileDown = await t.http.get(`/api/v1/public/kyc/verifications/${v.id}`).set('authorization', auth);
    expect([whileDown.body.id, whileDown.body.version]).toEqual([v.id, 3]);
    // Writes (and the reads inside them) never touch a replica.
    const other = await createVerificationInStatus(t, account.id, 'processing');
    expect((await transition(t, other.id, { status: 'approved' })).version).toBe(3);

    await proxy.restore();
    const after = await t.http.get('/api/v1/public/kyc/verifications').set('authorization', auth);
    expect(after.status).toBe(200);
    expect(after.body.data.map((row: { id: string }) => row.id)).toEqual([other.id, v.id]);
  });

  it('min_version on the detail route: at least that version or the newest, and a malformed one is 400', async () => {
    const account = await createAccount(t, { webhook_url: null });
    const auth = `Bearer ${account.secret}`;
    const v = await createVerificationInStatus(t, account.id, 'approved');
    const path = `/api/v1/public/kyc/verifications/${v.id}`;
    for (const [min, version] of [
      ['1', 3],
      ['3', 3],
      ['4', 3], // ahead of every copy: the primary's newest
      ['2147483647', 3],
    ] as const) {
      const res = await t.http.get(path).query({ min_version: min }).set('authorization', auth);
      expect({ min, status: res.status, version: res.body.version }).toEqual({ min, status: 200, version });
    }
    for (const bad of ['0', '-1', '1.5', 'abc', '', '2147483648', '99999999999']) {
      const res = await t.http.get(path).query({ min_version: bad }).set('authorization', auth);
      expect({ bad, status: res.status, field: res.body.error?.details?.[0]?.field }).toEqual({
        bad,
        status: 400,
        field: 'min_version',
      });
    }
    const unknown = await t.http
      .get('/api/v1/public/kyc/verifications/0193a6f2-0000-7000-8000-000000000000')
      .query({ min_version: '2' })
      .set('authorization', auth);
    expect(unknown.status).toBe(404);
  });

  it('stops the start with one line naming the variable when a read URL is not a PostgreSQL URL', async () => {
    await expect(startApp({ DATABASE_READ_URLS: 'redis://127.0.0.1:6379' })).rejects.toThrow(
      /Invalid configuration: DATABASE_READ_URLS/,
    );
  });
});
