/**
 * npm run bench:transitions — POST /api/v1/internal/kyc/verifications/{id}/transitions on one
 * APP_ROLE=api process (no worker) beside the naive floor (floor.ts: bare node:http + pg, the obvious
 * locked transaction), in interleaved slices of closed-loop changes. End to end through the worker
 * is bench:webhooks. See docs/performance.md;
 * the options and their defaults are in parseOptions.
 */
import { join } from 'node:path';
import { Client } from 'pg';
import { ApiClient, apiClient, BenchVerification, change, createBenchData } from '../harness/api';
import { freshBench } from '../harness/db';
import { SLICE_FLAGS, parseFlags, withSliceSeconds } from '../harness/flags';
import { changeLoop } from '../harness/loads';
import { runBench, startProcess, startService } from '../harness/processes';
import { besideFloor, besideFloorTable, fmt, footer, log, slicesLine, verdict } from '../harness/report';
import { serviceEnv } from '../harness/service-env';
import { interleave, median } from '../harness/slices';
import { BenchReceiver } from '../webhooks/receiver';

const PREFIX = 'kyc_trbench';

// --main: another build's dist/src/main.js, to compare two builds by their ratios to the same floor.
const parseOptions = (argv: string[]) =>
  withSliceSeconds(parseFlags(argv, { main: { type: 'string' } } as const, { ...SLICE_FLAGS, connections: 50 }));

/** The JSON shape of a value: its keys, recursively, and the types of its leaves. */
function shape(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(shape).join(',')}]`;
  if (typeof value !== 'object') return typeof value;
  const entries = Object.entries(value).map(([k, v]) => `${k}:${shape(v)}`);
  return `{${entries.join(',')}}`;
}

/** One change on each must answer the same JSON shape and write the same rows, or the bench stops. */
async function checkSameWork(databaseUrl: string, service: ApiClient, floor: ApiClient, v: BenchVerification[]) {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  const shapes: string[] = [];
  try {
    for (const [i, client] of [service, floor].entries()) {
      const { id } = v[i] as BenchVerification;
      const { ok, body } = await change(client, service, v[i] as BenchVerification);
      if (!ok) throw new Error(`parity check: the change of ${id} was refused: ${body}`);
      const { rows } = await db.query<{ body: string; delivery_status: string; history: number }>(
        `SELECT e.body, e.delivery_status, (SELECT count(*)::int FROM verification_status_history h
           WHERE h.verification_id = e.verification_id) AS history FROM webhook_events e WHERE e.verification_id = $1`,
        [id],
      );
      const [event] = rows;
      if (rows.length !== 1 || !event) throw new Error(`parity check: ${rows.length} events for ${id}`);
      shapes.push(
        `${shape(JSON.parse(body))}\n${event.delivery_status} ${event.history} ${shape(JSON.parse(event.body))}`,
      );
    }
  } finally {
    await db.end();
  }
  if (shapes[0] !== shapes[1]) throw new Error(`parity check: the floor differs:\n${shapes.join('\n')}`);
}

runBench('bench:transitions', parseOptions, async (options, lab) => {
  const databaseUrl = await freshBench(lab, 'BENCH_TRANSITIONS_DATABASE_URL', 'kyc_transitions_bench', [PREFIX]);
  const env = serviceEnv(databaseUrl, PREFIX, { APP_ROLE: 'api' });
  // Every account's webhook URL points here; no worker runs, so nothing may arrive.
  const receiver = await BenchReceiver.open(lab);
  const api = await lab.start(startService('service', env, { main: options.main }));
  const floorProcess = await lab.start(startProcess('floor', join(__dirname, 'floor.js'), env));
  const service = apiClient(api.url, options.connections + 16);
  const floor = apiClient(floorProcess.url, options.connections);
  lab.defer(() => [service.close(), floor.close()]);
  const { verifications } = await createBenchData(service, 20, options.connections * 20, receiver.urlFor);
  await checkSameWork(databaseUrl, service, floor, verifications);
  log(`20 accounts, ${verifications.length} verifications; the service and the floor answer and write alike`);
  // Both move the same verifications, each picking up where the other left them.
  const loop = (target: ApiClient) => changeLoop(target, service, verifications, options.connections).run;
  const targets = [
    { name: 'service', pid: api.child.pid, run: loop(service) },
    { name: 'floor', pid: floorProcess.child.pid, run: loop(floor) },
  ] as const;
  const { measured, perSlice } = await interleave(targets, options);
  const arrived = (await receiver.collect(0, 'no worker')).arrivals.length;
  if (arrived > 0) throw new Error(`${arrived} webhooks were delivered, yet no worker ran`);
  const sliceRatios = perSlice.map((x) => x.service.rps / x.floor.rps);
  const { service: s, floor: f } = measured;
  log();
  log(slicesLine(`${options.connections} closed-loop connections`, options));
  const row = besideFloor('status change', s, f, s.rps / f.rps, median(sliceRatios));
  log(besideFloorTable(['service / floor', 'median slice ratio'], [row]));
  log(`per-slice service / floor: ${sliceRatios.map((r) => fmt(r, 2)).join(' ')}`);
  log();
  const target = `transitions >= 1.0 x their naive floor (${fmt(s.rps)} vs ${fmt(f.rps)} req/s = ${fmt(s.rps / f.rps, 2)} x)`;
  log(verdict(s.rps >= f.rps, target));
  await footer(databaseUrl, s.failures + f.failures);
});
