import autocannon from 'autocannon';
import { ApiClient, apiClient, BenchVerification, change } from './api';
import { type LoadRun, type Tally } from './slices';

/** The loads the benches put on a target, each a LoadRun for the interleaved slices of slices.ts. */

/** A GET of the public API: the path and the account's Bearer secret. */
export type ApiGet = { path: string; secret: string };

/**
 * A closed-loop slice's first half second is left out: the load opens every connection at once,
 * and the answers to that burst are not the steady state. Latency counts only requests sent after it.
 */
const SETTLE_MS = 500;

/** A closed-loop run: CPU from SETTLE_MS on; `load` returns the requests and failures it counted after it. */
async function settled(tally: Tally, load: (startedAt: number) => Promise<[number, number]>): Promise<number> {
  const startedAt = performance.now();
  const settle = setTimeout(() => tally.markCpu(), SETTLE_MS);
  const [counted, failed] = await load(startedAt);
  clearTimeout(settle);
  return tally.add(counted, (performance.now() - startedAt - SETTLE_MS) / 1000, failed);
}

/** Closed loop at full speed: autocannon over the requests in turn. */
export function autocannonLoad(url: string, requests: ApiGet[], connections: number): LoadRun {
  return (seconds, tally) =>
    settled(tally, async (startedAt) => {
      let [next, counted, failed] = [0, 0, 0];
      const setupRequest = (request: autocannon.Request): autocannon.Request => {
        const r = requests[next++ % requests.length] as ApiGet;
        return { ...request, path: r.path, headers: { authorization: `Bearer ${r.secret}` } };
      };
      const result = await new Promise<autocannon.Result>((resolve, reject) => {
        const run = autocannon(
          { url, connections, duration: seconds, requests: [{ method: 'GET', setupRequest }] },
          (error: unknown, done: autocannon.Result) => (error ? reject(error as Error) : resolve(done)),
        );
        run.on('response', (_client, status, _bytes, responseTime) => {
          const at = performance.now() - startedAt;
          if (at < SETTLE_MS) return;
          counted++;
          if (status < 200 || status > 299) failed++;
          if (at - responseTime >= SETTLE_MS) tally.latencies.push(responseTime);
        });
      });
      return [counted, failed + result.errors + result.timeouts];
    });
}

/**
 * Closed-loop status changes against one target: `connections` clients, client c moving in turn the
 * verifications i with i % connections == c, one request at a time, so no two requests touch one
 * row, and a client stops only after its last answer. `committed` counts every change made.
 */
export function changeLoop(target: ApiClient, service: ApiClient, all: BenchVerification[], connections: number) {
  const owned = Array.from({ length: connections }, (_, c) => all.filter((_v, i) => i % connections === c));
  const turn = new Array<number>(connections).fill(0);
  const loop = { committed: 0, run: undefined as unknown as LoadRun };
  loop.run = (seconds, tally) =>
    settled(tally, async (startedAt) => {
      let [counted, failed] = [0, 0];
      const client = async (own: BenchVerification[], c: number): Promise<void> => {
        while (performance.now() < startedAt + seconds * 1000) {
          const sent = performance.now();
          const result = await change(target, service, own[turn[c]++ % own.length] as BenchVerification);
          if (result.ok) loop.committed++;
          if (sent - startedAt < SETTLE_MS) continue;
          counted++;
          if (!result.ok) failed++;
          tally.latencies.push(performance.now() - sent);
        }
      };
      await Promise.all(owned.map(client));
      return [counted, failed];
    });
  return loop;
}

/** Starts send(i) at start + i/rate for every i < total, whether or not earlier ones have ended; then waits for all. */
async function paced(rate: number, total: number, send: (i: number) => Promise<void>): Promise<number> {
  const start = performance.now();
  const sent: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    sent.push(send(i));
  }
  await Promise.all(sent);
  return (performance.now() - start) / 1000;
}

/** Open loop at `rate` requests/s, below saturation, for latency, on keep-alive connections kept from slice to slice. */
export function pacedLoad(url: string, requests: ApiGet[], rate: number): LoadRun {
  const client = apiClient(url, 256);
  let next = 0;
  return async (seconds, tally) => {
    let failed = 0;
    const get = async (): Promise<void> => {
      const [sentAt, request] = [performance.now(), requests[next++ % requests.length] as ApiGet];
      const { status } = await client.request('GET', request.path, request.secret).catch(() => ({ status: 0 }));
      tally.latencies.push(performance.now() - sentAt);
      if (status < 200 || status > 299) failed++;
    };
    tally.markCpu();
    const measuredSeconds = await paced(rate, seconds * rate, get);
    return tally.add(seconds * rate, measuredSeconds, failed);
  };
}

/** Status changes open loop at `rate`/s, each waiting only for its own verification's previous one. */
export async function pacedChanges(api: ApiClient, verifications: BenchVerification[], rate: number, total: number) {
  const responded = new Map<string, number>();
  const busy = new Map<string, Promise<void>>();
  let [ok, errors] = [0, 0];
  await paced(rate, total, (i) => {
    const v = verifications[i % verifications.length] as BenchVerification;
    const run = (busy.get(v.id) ?? Promise.resolve()).then(async () => {
      const result = await change(api, api, v);
      if (!result.ok) return void errors++;
      responded.set(`${v.id}:${v.version}`, result.at);
      ok++;
    });
    busy.set(v.id, run);
    return run;
  });
  return { ok, errors, responded };
}
