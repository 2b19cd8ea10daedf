/**
 * npm run bench:audit -- --a <dist/src/main.js of build A> [--b <… of build B>]
 *
 * What the audit trail costs the audited public writes: client endpoint changes
 * (PATCH /api/v1/public/kyc/webhook-endpoint, enabled ↔ disabled, each one audited on a build that
 * records the trail), one account per connection so no two requests touch one row and only the
 * trail's chain is shared. Two builds (A: one from before the trail was recorded; B: this one by
 * default) on one APP_ROLE=api process each, in interleaved pairs of closed-loop slices; per pair
 * the req/s and CPU per request, and the B/A ratios. Options and defaults: parseOptions.
 */
import { apiClient, type ApiClient } from '../harness/api';
import { freshBench } from '../harness/db';
import { FlagError, parseFlags } from '../harness/flags';
import { runBench, startService, SERVICE_MAIN } from '../harness/processes';
import { fmt, footer, log, table } from '../harness/report';
import { BENCH_ADMIN_TOKEN, serviceEnv } from '../harness/service-env';
import { interleave, median, type LoadRun } from '../harness/slices';

const PREFIX = 'kyc_auditbench';
const SETTLE_MS = 500;
const ENDPOINT = '/api/v1/public/kyc/webhook-endpoint';

function parseOptions(argv: string[]) {
  const text = { type: 'string' } as const;
  const values = parseFlags(argv, { a: text, b: text } as const, { pairs: 8, seconds: 4, connections: 32, warmup: 2 });
  if (values.a === undefined) throw new FlagError('--a is required (a build from before the audit trail)');
  return { ...values, a: values.a, b: values.b ?? SERVICE_MAIN };
}

/** Closed loop: connection c toggles account c's endpoint, one request at a time. */
function toggles(client: ApiClient, secrets: string[]): LoadRun {
  const enabled = secrets.map(() => true);
  return async (seconds, tally) => {
    const startedAt = performance.now();
    const settle = setTimeout(() => tally.markCpu(), SETTLE_MS);
    let [counted, failed] = [0, 0];
    await Promise.all(
      secrets.map(async (secret, c) => {
        while (performance.now() < startedAt + seconds * 1000) {
          const sent = performance.now();
          const status = enabled[c] ? 'disabled' : 'enabled';
          const res = await client.request('PATCH', ENDPOINT, secret, { status });
          if (res.status === 200) enabled[c] = !enabled[c];
          if (sent - startedAt < SETTLE_MS) continue;
          counted++;
          if (res.status !== 200) failed++;
          tally.latencies.push(performance.now() - sent);
        }
      }),
    );
    clearTimeout(settle);
    return tally.add(counted, (performance.now() - startedAt - SETTLE_MS) / 1000, failed);
  };
}

runBench('bench:audit', parseOptions, async (options, lab) => {
  const databaseUrl = await freshBench(lab, 'BENCH_AUDIT_DATABASE_URL', 'kyc_audit_bench', [PREFIX]);
  const env = serviceEnv(databaseUrl, PREFIX, { APP_ROLE: 'api' });
  const b = await lab.start(startService('B', env, { main: options.b }));
  const a = await lab.start(startService('A', env, { main: options.a }));
  const clients = [apiClient(a.url, options.connections), apiClient(b.url, options.connections)] as const;
  lab.defer(() => clients.map((client) => client.close()));
  const secrets: string[] = [];
  for (let i = 0; i < options.connections; i++) {
    const res = await clients[1].request('POST', '/api/v1/admin/accounts', BENCH_ADMIN_TOKEN, {
      name: `Audit bench ${i}`,
      webhook_url: `http://127.0.0.1:9/hook-${i}`,
    });
    if (res.status !== 201) throw new Error(`creating account ${i}: HTTP ${res.status} ${res.body}`);
    secrets.push((JSON.parse(res.body) as { webhook_secret: string }).webhook_secret);
  }
  const targets = [
    { name: 'A', pid: a.child.pid, run: toggles(clients[0], secrets) },
    { name: 'B', pid: b.child.pid, run: toggles(clients[1], secrets) },
  ] as const;
  const { measured, perSlice } = await interleave(targets, {
    warmup: options.warmup,
    slices: options.pairs,
    sliceSeconds: options.seconds,
  });
  const { rows } = await import('pg').then(async ({ Client }) => {
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      return await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM audit_events WHERE action = 'webhook_endpoint.updated'`,
      );
    } finally {
      await db.end();
    }
  });
  log(`${options.connections} closed-loop connections, one account each; endpoint changes audited by B: ${rows[0]?.n}`);
  const header = 'pair,A req/s,B req/s,B/A req/s,A CPU ms/req,B CPU ms/req,A PG ms/req,B PG ms/req'.split(',');
  const row = ({ A, B }: (typeof perSlice)[number], i: number): string[] => [
    String(i + 1),
    ...[A.rps, B.rps].map((n) => fmt(n)),
    ...[B.rps / A.rps, A.cpuMs, B.cpuMs, A.pgCpuMs, B.pgCpuMs].map((n) => fmt(n, 3)),
  ];
  log(table(header, perSlice.map(row)));
  const ratios = perSlice.map((p) => p.B.rps / p.A.rps);
  const { A, B } = measured;
  log(
    `A ${fmt(A.rps)} req/s (p50 ${fmt(A.p50)} ms, p99 ${fmt(A.p99)} ms); B ${fmt(B.rps)} req/s (p50 ${fmt(B.p50)} ms, p99 ${fmt(B.p99)} ms); ` +
      `B/A ${fmt(B.rps / A.rps, 3)}, median pair ${fmt(median(ratios), 3)}, B ahead in ${ratios.filter((r) => r >= 1).length} of ${ratios.length}`,
  );
  log(
    `${B.rps >= 0.9 * A.rps ? 'PASS' : 'FAIL'}  audited endpoint changes within 10 % of build A (one that records no trail)`,
  );
  await footer(databaseUrl, A.failures + B.failures);
});
