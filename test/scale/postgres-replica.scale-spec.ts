import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  ApiClient,
  CountingReceiver,
  FAST_DELIVERY,
  deliveryCounts,
  eventIds,
  figures,
  pool,
  report,
  sleep,
  tokens,
  waitUntil,
} from '../faults/harness';
import { TestApp, startApp } from '../helpers/test-app';
import { PgNode, PrimaryAndStandby, startPrimaryAndStandby } from '../helpers/postgres-cluster';

const DATABASE = 'kyc_scale_replica_test';
const CHANGES = 1_000;
const LANES = 4;
const DOWN_VERIFICATIONS = 50;

/** One greppable line per measurement, as the fault suite prints them. */
function figuresLine(scenario: string, values: Record<string, number | string>): void {
  const line = Object.entries(values)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  process.stdout.write(`FIGURES ${scenario}: ${line}\n`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function queryOne<T>(node: PgNode, sql: string): Promise<T> {
  const client = new Client({ connectionString: node.url(DATABASE) });
  await client.connect();
  try {
    return (await client.query(sql)).rows[0] as T;
  } finally {
    await client.end();
  }
}

/** The log lines a request produced on a server (the statement is logged before it runs). */
async function loggedBy(node: PgNode, mark: number, expected: string | undefined): Promise<string> {
  if (expected !== undefined) {
    await waitUntil(() => node.logSince(mark).includes(expected), 2_000, `${expected} in the ${node.name} log`, 20);
  }
  return node.logSince(mark);
}

describe('PostgreSQL streaming replica (a throwaway primary and hot standby)', () => {
  const receiver = new CountingReceiver();
  let cluster: PrimaryAndStandby | undefined;
  let app: TestApp | undefined;
  let lateApp: TestApp | undefined;
  let appEnv: Record<string, string> = {};
  let client: ApiClient;

  beforeAll(async () => {
    await receiver.start();
    cluster = await startPrimaryAndStandby();
    const primaryUrl = cluster.primary.url(DATABASE);
    execFileSync(
      process.execPath,
      [join(__dirname, '..', '..', 'dist', 'src', 'database', 'migrate.js'), '--create-database'],
      {
        env: { ...process.env, DATABASE_URL: primaryUrl },
        stdio: 'pipe',
      },
    );
    const standby = cluster.standby;
    await waitUntil(
      async () => {
        try {
          return (await queryOne<{ n: number }>(standby, 'SELECT count(*)::int AS n FROM migrations')).n > 0;
        } catch {
          return false;
        }
      },
      30_000,
      'the schema on the standby',
    );
    appEnv = {
      ...FAST_DELIVERY,
      APP_ROLE: 'all',
      DATABASE_URL: primaryUrl,
      DATABASE_READ_URLS: standby.url(DATABASE),
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_pgreplica`,
    };
    app = await startApp(appEnv);
    const readyUrl = `${app.url}/health/ready`;
    await waitUntil(async () => (await fetch(readyUrl)).status === 200, 20_000, 'the service to be ready', 100);
    client = new ApiClient(app.url, tokens());
  });

  afterAll(async () => {
    await lateApp?.close();
    await app?.close();
    cluster?.close();
    await receiver.stop();
  });

  it('serves the four replica routes from the standby and authentication and writes from the primary', async () => {
    const { primary, standby } = cluster as PrimaryAndStandby;
    const t = app as TestApp;
    expect(await queryOne<{ r: boolean }>(standby, 'SELECT pg_is_in_recovery() AS r')).toEqual({ r: true });
    const account = await client.createAccount('replica-routing', receiver.url);
    const auth = `Bearer ${account.secret}`;
    const id = await client.createVerification(account.id, 'routing-1');

    // A write: the primary logs the UPDATE, the standby logs nothing at all.
    let primaryMark = primary.logMark();
    let standbyMark = standby.logMark();
    expect(await client.transition(id, 'processing')).toBe(200);
    expect(await loggedBy(primary, primaryMark, 'UPDATE')).toMatch(/UPDATE "?verifications"?/);
    expect(await client.transition(id, 'approved')).toBe(200);
    const events = await waitForEvents(t, account.id, 2);
    const firstEvent = events[0];
    // Delivered first, so the worker's reads by event id are not in the logs read below.
    await waitUntil(
      async () => (await deliveryCounts(t.db, [account.id])).delivered === 2,
      10_000,
      'both webhooks recorded as delivered',
      50,
    );
    expect(standby.logSince(standbyMark)).not.toMatch(/execute|statement:/);

    const routes: Array<{ path: string; key: string; table: string }> = [
      { path: '/api/v1/public/kyc/verifications', key: account.id, table: 'verifications' },
      { path: `/api/v1/public/kyc/verifications/${id}`, key: id, table: 'verification_status_history' },
      { path: '/api/v1/public/kyc/webhook-events', key: account.id, table: 'webhook_events' },
      { path: `/api/v1/public/kyc/webhook-events/${firstEvent}`, key: firstEvent, table: 'webhook_attempts' },
    ];
    const proof: Record<string, number> = {};
    for (const [index, route] of routes.entries()) {
      primaryMark = primary.logMark();
      standbyMark = standby.logMark();
      const res = await t.http.get(route.path).set('authorization', auth);
      expect({ path: route.path, status: res.status }).toEqual({ path: route.path, status: 200 });
      const onStandby = await loggedBy(standby, standbyMark, route.key);
      // The secret's first use looks it up on the primary; later ones may be answered by the
      // process's credential cache (no statement at all), never by the standby.
      const onPrimary = await loggedBy(primary, primaryMark, index === 0 ? 'secret_hash' : undefined);
      expect({ path: route.path, standbyReadsTable: onStandby.includes(route.table) }).toEqual({
        path: route.path,
        standbyReadsTable: true,
      });
      // The credential look-up is on the primary only; the route's own reads are on the standby only.
      expect(onStandby).not.toContain('secret_hash');
      if (index === 0) expect(onPrimary).toMatch(/account_secrets/);
      if (route.key !== account.id) expect(onPrimary).not.toContain(route.key);
      proof[route.path.replace(/[0-9a-f-]{36}/, '{id}')] = onStandby
        .split('\n')
        .filter((l) => /execute/.test(l)).length;
    }
    figuresLine('postgres-replica-routing', {
      standby_statements_list: proof['/api/v1/public/kyc/verifications'],
      standby_statements_detail: proof['/api/v1/public/kyc/verifications/{id}'],
      standby_statements_events: proof['/api/v1/public/kyc/webhook-events'],
      standby_statements_event: proof['/api/v1/public/kyc/webhook-events/{id}'],
      auth_on_standby: 0,
    });
  });

  it(`shows a change on the replica routes after a short lag (${CHANGES} changes)`, async () => {
    const account = await client.createAccount('replica-lag', receiver.url);
    const auth = account.secret;
    const verifications = await pool(
      Array.from({ length: CHANGES / 2 }, (_, i) => i),
      8,
      async (i) => ({ id: await client.createVerification(account.id, `lag-${i}`), externalId: `lag-${i}` }),
    );
    const lags: number[] = [];
    const byRoute: Record<'list' | 'detail', number[]> = { list: [], detail: [] };
    /** How long the read that showed the change took by itself: the floor under every lag. */
    const lastReadMs: number[] = [];
    let staleReads = 0;
    let freshOnFirstRead = 0;
    let changeNo = 0;
    const replayLag = await sampleReplayLag((cluster as PrimaryAndStandby).primary);
    const started = Date.now();
    await pool(verifications, LANES, async (v) => {
      for (const status of ['processing', 'approved'] as const) {
        const viaList = changeNo++ % 2 === 1;
        const change = await client.call(
          'POST',
          `/api/v1/internal/kyc/verifications/${v.id}/transitions`,
          tokens().internal,
          { status },
        );
        const committedAt = Date.now();
        expect(change.status).toBe(200);
        const version = Number(change.body.version);
        for (let reads = 1; ; reads += 1) {
          const readStartedAt = Date.now();
          const read = viaList
            ? await client.call('GET', `/api/v1/public/kyc/verifications?external_user_id=${v.externalId}`, auth)
            : await client.call('GET', `/api/v1/public/kyc/verifications/${v.id}`, auth);
          expect(read.status).toBe(200);
          const seen = viaList
            ? Number((read.body.data as Array<{ version: number }>)[0]?.version ?? 0)
            : Number(read.body.version);
          if (seen >= version) {
            lastReadMs.push(Date.now() - readStartedAt);
            if (reads === 1) freshOnFirstRead += 1;
            break;
          }
          staleReads += 1;
          if (Date.now() - committedAt > 10_000)
            throw new Error(`version ${version} of ${v.id} not on the replica after 10 s`);
        }
        const lag = Date.now() - committedAt;
        lags.push(lag);
        byRoute[viaList ? 'list' : 'detail'].push(lag);
      }
    });
    const elapsedMs = Date.now() - started;
    const replayLagMs = await replayLag.stop();
    for (const sample of [lags, byRoute.list, byRoute.detail, lastReadMs]) sample.sort((a, b) => a - b);
    expect(lags).toHaveLength(CHANGES);
    figuresLine('postgres-replica-lag', {
      changes: CHANGES,
      lanes: LANES,
      lag_p50_ms: percentile(lags, 50),
      lag_p99_ms: percentile(lags, 99),
      lag_max_ms: lags[lags.length - 1],
      lag_detail_p50_ms: percentile(byRoute.detail, 50),
      lag_detail_p99_ms: percentile(byRoute.detail, 99),
      lag_list_p50_ms: percentile(byRoute.list, 50),
      lag_list_p99_ms: percentile(byRoute.list, 99),
      read_p50_ms: percentile(lastReadMs, 50),
      read_p99_ms: percentile(lastReadMs, 99),
      stale_reads: staleReads,
      changes_seen_on_first_read: freshOnFirstRead,
      elapsed_ms: elapsedMs,
      pg_replay_lag_samples: replayLagMs.length,
      pg_replay_lag_p50_ms: replayLagMs.length ? percentile(replayLagMs, 50).toFixed(2) : 'none',
      pg_replay_lag_max_ms: replayLagMs.length ? replayLagMs[replayLagMs.length - 1].toFixed(2) : 'none',
    });
    // Streaming replication on one host: a client sees its change within a read or two.
    expect(percentile(lags, 99)).toBeLessThan(1_000);
  });

  it('min_version reads the primary when the standby is behind (recovery_min_apply_delay = 3 s)', async () => {
    const { primary, standby } = cluster as PrimaryAndStandby;
    const t = app as TestApp;
    const setDelay = async (delay: string) => {
      // A reloadable setting: the last line of postgresql.conf wins.
      appendFileSync(join(standby.dataDir, 'postgresql.conf'), `recovery_min_apply_delay = '${delay}'\n`);
      await queryOne(standby, 'SELECT pg_reload_conf()');
      await waitUntil(
        async () => {
          const shown = (await queryOne<{ recovery_min_apply_delay: string }>(standby, 'SHOW recovery_min_apply_delay'))
            .recovery_min_apply_delay;
          return shown === delay || (delay === '0s' && shown === '0');
        },
        5_000,
        `recovery_min_apply_delay = ${delay}`,
        50,
      );
    };
    await setDelay('3s');
    try {
      const account = await client.createAccount('replica-min-version', receiver.url);
      const auth = `Bearer ${account.secret}`;
      const id = await client.createVerification(account.id, 'min-version-1');
      expect(await client.transition(id, 'processing')).toBe(200);
      const path = `/api/v1/public/kyc/verifications/${id}`;

      // Without min_version the standby answers, and it has not applied the change yet.
      const stale = await t.http.get(path).set('authorization', auth);
      expect({ status: stale.status, version: stale.body.version }).not.toEqual({ status: 200, version: 2 });

      const primaryMark = primary.logMark();
      const fresh = await t.http.get(path).query({ min_version: '2' }).set('authorization', auth);
      expect({ status: fresh.status, version: fresh.body.version, status_: fresh.body.status }).toEqual({
        status: 200,
        version: 2,
        status_: 'processing',
      });
      // The fresh answer was read on the primary: its log has the detail's read of this id.
      expect(await loggedBy(primary, primaryMark, id)).toMatch(/verification_status_history/);
      figuresLine('postgres-replica-min-version', { stale_status: stale.status, fresh_version: fresh.body.version });
    } finally {
      await setDelay('0s');
    }
  });

  it('serves the replica routes from the primary once the standby is stopped, while changes and deliveries go on', async () => {
    const { standby } = cluster as PrimaryAndStandby;
    const t = app as TestApp;
    const account = await client.createAccount('replica-down', receiver.url);
    const auth = `Bearer ${account.secret}`;
    const before = await client.createVerification(account.id, 'down-before');
    expect(await client.transition(before, 'processing')).toBe(200);
    const [eventId] = await waitForEvents(t, account.id, 1);

    const pid = standby.pid();
    standby.stopImmediate();
    expect(pid === undefined ? false : isAlive(pid)).toBe(false);

    const replicaRoutes = [
      '/api/v1/public/kyc/verifications',
      `/api/v1/public/kyc/verifications/${before}`,
      '/api/v1/public/kyc/webhook-events',
      `/api/v1/public/kyc/webhook-events/${eventId}`,
    ];
    const answerMs: number[] = [];
    // Replicas degrade, never fail: each read that meets the stopped standby is served by the primary.
    const checkFallback = async (): Promise<void> => {
      for (const path of replicaRoutes) {
        const startedAt = Date.now();
        const res = await t.http.get(path).set('authorization', auth);
        answerMs.push(Date.now() - startedAt);
        expect({ path, status: res.status, code: res.body.error?.code }).toEqual({
          path,
          status: 200,
          code: undefined,
        });
      }
    };
    await checkFallback();

    // Everything else is on the primary and keeps working.
    const admin = await t.http
      .get(`/api/v1/admin/accounts/${account.id}`)
      .set('authorization', `Bearer ${t.adminToken}`);
    expect(admin.status).toBe(200);
    const testEvent = await t.http
      .post('/api/v1/public/kyc/webhook-events/test')
      .set('authorization', auth)
      .send({ status: 'approved' });
    expect(testEvent.status).toBe(202);
    const ids = await pool(
      Array.from({ length: DOWN_VERIFICATIONS }, (_, i) => i),
      8,
      (i) => client.createVerification(account.id, `down-${i}`),
    );
    const statuses = await pool(ids, 8, async (vid) => [
      await client.transition(vid, 'processing'),
      await client.transition(vid, 'approved'),
    ]);
    expect(statuses.flat().filter((status) => status !== 200)).toEqual([]);
    const expectedEvents = 1 + 1 + DOWN_VERIFICATIONS * 2;
    await waitUntil(
      async () => {
        const all = await eventIds(t.db, [account.id]);
        return all.length === expectedEvents && all.every((e) => receiver.delivered.has(e));
      },
      60_000,
      `${expectedEvents} deliveries with the standby down`,
      250,
    );
    await checkFallback();
    const ready = await fetch(`${t.url}/health/ready`);

    // A process (re)started while a read URL is down: TypeORM's initialize() opens one connection
    // to every replica, so the whole data source stays uninitialised and every API route answers
    // 503 (the process retries every 2 s). This is why a failover must not restart the service
    // before DATABASE_READ_URLS names a server that answers (docs/scaling.md).
    lateApp = await startApp({ ...appEnv, APP_ROLE: 'api' });
    const lateClient = new ApiClient(lateApp.url, tokens());
    const lateCreate = await lateClient.call('POST', '/api/v1/internal/kyc/verifications', tokens().internal, {
      account_id: account.id,
      external_user_id: 'down-late-start',
    });
    expect(lateCreate.status).toBe(503);

    // The standby back on its port: both processes read from it again, without a restart.
    const restartedAt = Date.now();
    standby.start();
    await waitUntil(
      async () => (await client.call('GET', replicaRoutes[0], account.secret)).status === 200,
      30_000,
      'the replica routes back after the standby restarted',
      100,
    );
    const recoveredMs = Date.now() - restartedAt;
    await waitUntil(
      async () => (await lateClient.call('GET', replicaRoutes[0], account.secret)).status === 200,
      30_000,
      'the process started while the standby was down to connect',
      100,
    );
    const lateRecoveredMs = Date.now() - restartedAt;
    answerMs.sort((a, b) => a - b);
    const result = await figures(t.db, [account.id], receiver, {
      replica_routes_from_primary: `${answerMs.length}/${answerMs.length}`,
      answer_max_ms: answerMs[answerMs.length - 1],
      transitions_ok: statuses.flat().length,
      health_ready: ready.status,
      recovered_after_standby_start_ms: recoveredMs,
      started_during_outage_internal_create: lateCreate.status,
      started_during_outage_recovered_ms: lateRecoveredMs,
    });
    report('postgres-replica-down', result);
    expect(result.lost).toBe(0);
  });
});

/** Samples the primary's own view of the standby's replay lag every 50 ms (null when idle: skipped). */
async function sampleReplayLag(primary: PgNode): Promise<{ stop(): Promise<number[]> }> {
  const db = new Client({ connectionString: primary.url(DATABASE) });
  await db.connect();
  const samples: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const res = await db.query<{ ms: number | null }>(
        'SELECT (extract(epoch FROM replay_lag) * 1000)::float AS ms FROM pg_stat_replication',
      );
      const ms = res.rows[0]?.ms;
      if (ms !== null && ms !== undefined) samples.push(ms);
      await sleep(50);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await db.end();
      return samples.sort((a, b) => a - b);
    },
  };
}

async function waitForEvents(t: TestApp, accountId: string, count: number): Promise<string[]> {
  let ids: string[] = [];
  await waitUntil(
    async () => {
      ids = await eventIds(t.db, [accountId]);
      return ids.length >= count;
    },
    10_000,
    `${count} events`,
    50,
  );
  return ids;
}

/** A process that exited but was not reaped yet (state Z) counts as gone. */
function isAlive(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}
