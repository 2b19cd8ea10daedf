import { join } from 'node:path';
import { Client } from 'pg';
import { recreateBenchDatabase } from '../common/bench-db';
import { BenchProcess } from '../common/processes';
import { Measured, interleave, median } from '../common/slices';
import { startTarget } from '../list/targets';
import { createBenchData } from '../webhooks/bench-data';
import { startService } from '../webhooks/bench-setup';
import { ApiClient, BenchVerification } from '../webhooks/driver';
import { BenchReceiver } from '../webhooks/receiver';
import { applyMove, closedLoop, nextMove } from './closed-loop';

const FLOOR_MAIN = join(__dirname, 'floor-server.js');

export interface RouteFigures {
  service: Measured;
  floor: Measured;
  /** Service req/s ÷ floor req/s over all slices, and the median of the per-slice ratios. */
  ratio: number;
  sliceRatio: number;
  sliceRatios: number[];
  /** Outbox rows left pending by the phase (the service's and the floor's; nothing delivers them). */
  pendingEvents: number;
}

export interface RouteOptions {
  connections: number;
  warmup: number;
  slices: number;
  sliceSeconds: number;
}

/** The JSON shape of a value: its keys, recursively, and the types of its leaves. */
function shape(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(shape).join(',')}]`;
  if (typeof value === 'object')
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => `${key}:${shape(inner)}`)
      .join(',')}}`;
  return typeof value;
}

/**
 * One move on each target must answer the same JSON shape and write the same rows (a history entry,
 * a pending outbox event whose payload has the same shape), or the comparison means nothing.
 */
async function checkSameWork(
  databaseUrl: string,
  token: string,
  pairs: [ApiClient, BenchVerification][],
): Promise<void> {
  const shapes: string[] = [];
  for (const [client, v] of pairs) {
    const res = await client.request(
      'POST',
      `/api/v1/internal/kyc/verifications/${v.id}/transitions`,
      token,
      nextMove(v),
    );
    if (res.status !== 200) throw new Error(`parity check: HTTP ${res.status} ${res.body}`);
    applyMove(v);
    shapes.push(shape(JSON.parse(res.body)));
  }
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    for (const [, v] of pairs) {
      const events = await db.query<{ body: string; delivery_status: string; next_attempt_at: Date | null }>(
        'SELECT body, delivery_status, next_attempt_at FROM webhook_events WHERE verification_id = $1',
        [v.id],
      );
      const history = await db.query('SELECT 1 FROM verification_status_history WHERE verification_id = $1', [v.id]);
      const [event] = events.rows;
      if (events.rowCount !== 1 || history.rowCount !== 2 || !event)
        throw new Error(`parity check: ${events.rowCount} events and ${history.rowCount} history rows for ${v.id}`);
      shapes.push(`${event.delivery_status} ${event.next_attempt_at !== null} ${shape(JSON.parse(event.body))}`);
    }
  } finally {
    await db.end();
  }
  const [serviceAnswer, floorAnswer, serviceEvent, floorEvent] = shapes;
  if (serviceAnswer !== floorAnswer) throw new Error(`parity check: answers differ:\n${serviceAnswer}\n${floorAnswer}`);
  if (serviceEvent !== floorEvent) throw new Error(`parity check: events differ:\n${serviceEvent}\n${floorEvent}`);
}

/**
 * Part 1: the transitions route on one APP_ROLE=api process beside the naive floor, on a freshly
 * re-created database, in interleaved slices, no worker running. The receiver only watches: every
 * account's webhook URL points at it, so a delivery of anything written here would show.
 */
export async function measureRoute(
  databaseUrl: string,
  env: Record<string, string>,
  tokens: { admin: string; internal: string },
  receiver: BenchReceiver,
  options: RouteOptions,
  log: (line: string) => void,
): Promise<RouteFigures> {
  await recreateBenchDatabase(databaseUrl);
  const started: BenchProcess[] = [];
  const clients: ApiClient[] = [];
  try {
    const api = await startService('api', { ...env, APP_ROLE: 'api' });
    started.push(api);
    const floor = await startTarget('floor', FLOOR_MAIN, env, '/');
    started.push(floor);
    const service = new ApiClient(api.url, options.connections + 16);
    const floorClient = new ApiClient(floor.url, options.connections);
    clients.push(service, floorClient);
    const { verifications } = await createBenchData(service, tokens, 20, options.connections * 20, (account) =>
      receiver.urlFor(account),
    );
    await checkSameWork(databaseUrl, tokens.internal, [
      [service, verifications[0] as BenchVerification],
      [floorClient, verifications[1] as BenchVerification],
    ]);
    log(`route: 20 accounts, ${verifications.length} verifications; service and floor answer and write alike`);
    const runs = [
      ['service', closedLoop(service, service, tokens.internal, verifications, options.connections)],
      ['floor', closedLoop(floorClient, service, tokens.internal, verifications, options.connections)],
    ] as const;
    const { tallies, perSlice } = await interleave(runs, options);
    const sliceRatios = perSlice.map((rps) => rps.service / rps.floor);
    const [s, f] = [tallies.service.measured(), tallies.floor.measured()];
    for (const [name, m] of [
      ['service', s],
      ['floor', f],
    ] as const) {
      log(
        `route / ${name}: ${m.rps.toFixed(0)} req/s, p50 ${m.p50} ms, p99 ${m.p99} ms${m.failures ? `, ${m.failures} FAILED requests` : ''}`,
      );
    }
    log(`route: service / floor per slice ${sliceRatios.map((r) => r.toFixed(2)).join(' ')}`);
    const db = new Client({ connectionString: databaseUrl });
    await db.connect();
    const pending = await db
      .query<{ n: string }>(`SELECT count(*) AS n FROM webhook_events WHERE delivery_status = 'pending'`)
      .finally(() => db.end());
    const { arrivals } = receiver.take();
    if (arrivals.length > 0) throw new Error(`${arrivals.length} webhooks were delivered during part 1: no worker ran`);
    return {
      service: s,
      floor: f,
      ratio: s.rps / f.rps,
      sliceRatio: median(sliceRatios),
      sliceRatios,
      pendingEvents: Number(pending.rows[0]?.n ?? 0),
    };
  } finally {
    for (const client of clients) client.close();
    for (const p of started.reverse()) await p.stop();
  }
}
