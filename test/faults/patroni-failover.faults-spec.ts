import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { TestApp, startApp } from '../helpers/test-app';
import { ApiClient, CountingReceiver, FAST_DELIVERY, report, sleep, tokens, waitUntil } from './harness';
import { PATRONI_MISSING, PatroniCluster, patroniInstalled, startPatroniCluster } from './patroni';
import { FailoverLoad } from './failover-load';

const DATABASE = 'kyc_patroni_test';

/**
 * The service behind HAProxy and Patroni with synchronous replication, under write load (status
 * changes with expected_version, a min_version read after each), through a postmaster kill, a
 * switchover and a kill of the leader's Patroni; one process reads from the standbys too
 * (DATABASE_READ_URLS).
 * Fails on any 500, any 503 that hid a commit (a retry of it finding its change made), any
 * acknowledged change missing afterwards, any min_version read older than asked, any committed
 * change not delivered.
 */
describe('PostgreSQL failover behind HAProxy and Patroni', () => {
  const receiver = new CountingReceiver();
  let cluster: PatroniCluster | undefined;
  const apps: TestApp[] = [];
  let load: FailoverLoad;

  beforeAll(async () => {
    if (!patroniInstalled()) {
      if (process.env.CI) throw new Error(PATRONI_MISSING);
      return;
    }
    await receiver.start();
    cluster = await startPatroniCluster();
    execFileSync(
      process.execPath,
      [join(__dirname, '..', '..', 'dist', 'src', 'database', 'migrate.js'), '--create-database'],
      {
        env: { ...process.env, DATABASE_URL: cluster.primaryUrl(DATABASE) },
        stdio: 'pipe',
      },
    );
    const env = {
      ...FAST_DELIVERY,
      APP_ROLE: 'all',
      RATE_LIMIT_PER_MINUTE: '0',
      DATABASE_URL: cluster.primaryUrl(DATABASE),
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_patroni`,
      LOG_LEVEL: 'warn',
    };
    apps.push(await startApp(env));
    apps.push(await startApp({ ...env, DATABASE_READ_URLS: cluster.replicasUrl(DATABASE) }));
    for (const app of apps) {
      await waitUntil(async () => (await fetch(`${app.url}/health/ready`)).status === 200, 30_000, 'ready', 100);
    }
    const clients = apps.map((app) => new ApiClient(app.url, tokens()));
    load = new FailoverLoad(
      clients,
      await Promise.all(clients.map((c, i) => c.createAccount(`patroni-${i}`, receiver.url))),
    );
  }, 240_000);

  afterAll(async () => {
    if (process.env.PATRONI_APP_LOG) {
      writeFileSync(process.env.PATRONI_APP_LOG, apps.map((app) => app.output.join('')).join('\n'));
    }
    for (const app of apps) await app.close();
    cluster?.stop();
    await receiver.stop();
  });

  const round = async (name: string, fault: (c: PatroniCluster) => Promise<void>): Promise<void> => {
    const c = cluster;
    if (!c) return;
    // A fault before the synchronous standby is recorded (right after a switchover) would leave no node
    // that Patroni may promote: what the rounds measure starts from a settled cluster.
    await c.settled();
    const running = load.start(20);
    await sleep(3_000);
    const before = load.snapshot();
    const seen = load.findings().length;
    const faultAt = Date.now();
    try {
      await fault(c);
      // Written through again: a stretch of acknowledged writes with no 503 among them.
      await sleep(2_000);
      await waitUntil(() => load.writesSinceLastRefusal(faultAt) >= 40, 60_000, `writes after the ${name}`, 100).catch(
        async (error: Error) => {
          const state = (app: TestApp) => app.process.signalCode ?? app.process.exitCode ?? 'running';
          const processes = apps.map((app, i) => `app ${i}: ${String(state(app))}`).join(', ');
          const members = await c.describe().catch((failed: Error) => `cluster not described: ${failed.message}`);
          throw new Error(`${error.message}\n${load.describe(faultAt)}\n${processes}\n${members}`, { cause: error });
        },
      );
    } finally {
      await load.stop(running);
    }
    const after = load.snapshot();
    report(`patroni ${name}`, {
      writes_back_after_ms: load.outageAfter(faultAt),
      answered_200: after.ok - before.ok,
      answered_503: after.unavailable - before.unavailable,
      commit_unknown: after.unknown - before.unknown,
      hidden_commits: after.hiddenCommits - before.hiddenCommits,
      errors_500: after.internalErrors - before.internalErrors,
      stale_reads: after.staleReads - before.staleReads,
    });
    const findings = load.findings().slice(seen);
    const logged = apps
      .flatMap((app) => app.output.join('').split('\n'))
      .filter((line) => /"level":50|error/i.test(line));
    expect({ findings, logged: findings.length ? logged.slice(-20) : [] }).toEqual({ findings: [], logged: [] });
  };

  it('a postmaster killed under write load: restarted in place, nothing hidden, nothing lost', async () => {
    if (!cluster) return;
    await round('postmaster kill', async (c) => c.killPostmaster(await c.leader()));
  });

  it('a switchover under write load', async () => {
    if (!cluster) return;
    await round('switchover', async (c) => {
      const leader = await c.leader();
      await c.switchover(leader, c.nodes.find((n) => n !== leader) as PatroniCluster['nodes'][number]);
    });
  });

  it("the leader's Patroni killed under write load: the standby promoted once the key expires, the old primary back as a standby", async () => {
    if (!cluster) return;
    await round('Patroni kill', async (c) => {
      const leader = await c.leader();
      c.killPatroni(leader);
      const promoted = async () => (await c.members()).some((m) => m.role === 'leader' && m.name !== leader.name);
      await waitUntil(promoted, 60_000, 'the standby to lead', 250);
      await c.restartPatroni(leader);
    });
  });

  it('every acknowledged change is in the database and every committed change delivered', async () => {
    if (!cluster) return;
    const client = new Client({ connectionString: cluster.primaryUrl(DATABASE) });
    await client.connect();
    try {
      expect(await load.missingAcknowledged(client)).toEqual([]);
      const { rows } = await client.query<{ id: string }>('SELECT id FROM webhook_events');
      await waitUntil(() => rows.every((row) => receiver.delivered.has(row.id)), 60_000, 'every event delivered', 250);
    } finally {
      await client.end();
    }
  });
});
