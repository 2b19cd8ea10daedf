import { recreateBenchDatabase } from '../common/bench-db';
import { BenchProcess } from '../common/processes';
import { Percentiles, collect, percentiles } from '../webhooks/arrivals';
import { createBenchData } from '../webhooks/bench-data';
import { startService } from '../webhooks/bench-setup';
import { ApiClient, DriveResult, driveFlat, drivePaced } from '../webhooks/driver';
import { BenchReceiver, verifySample } from '../webhooks/receiver';

export interface EndToEndFigures {
  maxRate: {
    changes: number;
    transitionsPerSec: number;
    deliveriesPerSec: number;
    /** deliveries/s ÷ transitions/s. */
    keepUp: number;
    lastArrivalAfterLastResponseMs: number;
    errors: number;
    missing: number;
  };
  paced: {
    rate: number;
    changes: number;
    achievedRate: number;
    maxLagMs: number;
    commitToArrival: Percentiles;
    responseToArrival: Percentiles;
    errors: number;
    missing: number;
  };
  signatures: { checked: number; failed: number };
  duplicates: number;
}

export interface EndToEndOptions {
  connections: number;
  changes: number;
  pacedSeconds: number;
}

interface Payload {
  data: { verification: { id: string; version: number; updated_at: string } };
}

function describe(what: string, drive: DriveResult, log: (line: string) => void): void {
  const seconds = (drive.finished - drive.started) / 1000;
  log(
    `${what}: ${drive.ok} changes in ${seconds.toFixed(1)} s (${(drive.ok / seconds).toFixed(0)}/s)${drive.errors ? `, ${drive.errors} FAILED (first: ${drive.firstError})` : ''}`,
  );
}

/**
 * Part 2: transitions through one APP_ROLE=api process, delivered by one APP_ROLE=worker process to
 * the receiver, on a database re-created for this part (nothing of part 1 is left to deliver).
 * (a) closed loop at the API's maximum rate; (b) open loop at half that rate.
 */
export async function measureEndToEnd(
  databaseUrl: string,
  env: Record<string, string>,
  tokens: { admin: string; internal: string },
  receiver: BenchReceiver,
  options: EndToEndOptions,
  log: (line: string) => void,
): Promise<EndToEndFigures> {
  await recreateBenchDatabase(databaseUrl);
  const started: BenchProcess[] = [];
  let client: ApiClient | undefined;
  try {
    const api = await startService('api', { ...env, APP_ROLE: 'api' });
    started.push(api);
    started.push(await startService('worker', { ...env, APP_ROLE: 'worker' }));
    client = new ApiClient(api.url, Math.max(options.connections, 64));
    const data = await createBenchData(client, tokens, 20, options.connections * 20, (account) =>
      receiver.urlFor(account),
    );
    const { verifications, secrets } = data;
    let signatures = { checked: 0, failed: 0 };
    let duplicates = 0;
    const take = async (expected: number, what: string) => {
      const arrived = await collect(receiver, expected, what, log);
      const [checked, failed] = verifySample(arrived.arrivals, (a) => secrets[a.account] as string);
      signatures = { checked: signatures.checked + checked, failed: signatures.failed + failed };
      duplicates += arrived.duplicates;
      return arrived;
    };

    const warm = await driveFlat(client, tokens.internal, verifications, 1_000, options.connections);
    describe('end to end, warm-up', warm, log);
    await take(warm.ok, 'warm-up');

    const flat = await driveFlat(client, tokens.internal, verifications, options.changes, options.connections);
    describe('end to end, max rate', flat, log);
    const flatArrived = await take(flat.ok, 'max rate');
    const lastArrival = Math.max(...flatArrived.arrivals.map((a) => a.at));
    const transitionsPerSec = flat.ok / ((flat.finished - flat.started) / 1000);
    const deliveriesPerSec = flatArrived.arrivals.length / ((lastArrival - flat.started) / 1000);
    const maxRate = {
      changes: flat.ok,
      transitionsPerSec,
      deliveriesPerSec,
      keepUp: deliveriesPerSec / transitionsPerSec,
      lastArrivalAfterLastResponseMs: lastArrival - flat.finished,
      errors: flat.errors,
      missing: flatArrived.missing,
    };

    const rate = Math.max(1, Math.round(transitionsPerSec / 2));
    const total = Math.max(1, Math.round(rate * options.pacedSeconds));
    log(`end to end, paced: ${total} changes at ${rate}/s (half the max rate), open loop`);
    const paced = await drivePaced(client, tokens.internal, verifications, total, rate);
    describe('end to end, paced', paced, log);
    const pacedArrived = await take(paced.ok, 'paced');
    const commitToArrival: number[] = [];
    const responseToArrival: number[] = [];
    for (const arrival of pacedArrived.arrivals) {
      const v = (JSON.parse(arrival.body) as Payload).data.verification;
      commitToArrival.push(arrival.at - Date.parse(v.updated_at));
      const responded = paced.responded.get(`${v.id}:${v.version}`);
      if (responded !== undefined) responseToArrival.push(arrival.at - responded);
    }
    return {
      maxRate,
      paced: {
        rate,
        changes: paced.ok,
        achievedRate: paced.ok / ((paced.finished - paced.started) / 1000),
        maxLagMs: Math.round(paced.maxLagMs),
        commitToArrival: percentiles(commitToArrival),
        responseToArrival: percentiles(responseToArrival),
        errors: paced.errors,
        missing: pacedArrived.missing,
      },
      signatures,
      duplicates,
    };
  } finally {
    client?.close();
    for (const p of started.reverse()) await p.stop();
  }
}
