import { LoadRun, SETTLE_MS, Tally } from '../common/slices';
import { ApiClient, BenchVerification } from '../webhooks/driver';

const TRANSITIONS = (id: string): string => `/api/v1/internal/kyc/verifications/${id}/transitions`;

/** The next move of a verification that goes back and forth: pending → processing → pending … */
export function nextMove(v: BenchVerification): { status: 'pending' | 'processing'; expected_version: number } {
  return { status: v.status === 'pending' ? 'processing' : 'pending', expected_version: v.version };
}

/** Records a move the target answered 200 for. */
export function applyMove(v: BenchVerification): void {
  v.status = v.status === 'pending' ? 'processing' : 'pending';
  v.version++;
}

/** After a refused or lost move: the verification's state as the service reads it now. */
async function resynchronise(service: ApiClient, v: BenchVerification): Promise<void> {
  const res = await service.request('GET', `/api/v1/public/kyc/verifications/${v.id}`, v.secret).catch(() => undefined);
  if (res?.status !== 200) return;
  const current = JSON.parse(res.body) as { status: 'pending' | 'processing'; version: number };
  v.status = current.status;
  v.version = current.version;
}

/**
 * A closed-loop load run of status changes against one target (the service or the floor, which
 * share the database and so the verifications): `connections` clients on a keep-alive agent, client
 * c moving in turn the verifications i with i % connections == c, one request at a time, so no two
 * requests ever touch one row. Unlike autocannon, a client stops only after its last answer, so the
 * bench always knows every verification's version and no request is cut off mid-flight. Counted
 * like bench:list's autocannon runs: the answers after SETTLE_MS, over the time until the last one.
 */
export function closedLoop(
  target: ApiClient,
  service: ApiClient,
  token: string,
  verifications: BenchVerification[],
  connections: number,
): LoadRun {
  const owned = Array.from({ length: connections }, (_, c) => verifications.filter((_v, i) => i % connections === c));
  const turn = new Array<number>(connections).fill(0);
  return async (seconds: number, tally: Tally): Promise<number> => {
    const startedAt = performance.now();
    const deadline = startedAt + seconds * 1000;
    let counted = 0;
    let failed = 0;
    await Promise.all(
      owned.map(async (own, c) => {
        while (performance.now() < deadline) {
          const v = own[turn[c]++ % own.length] as BenchVerification;
          const sent = performance.now();
          const res = await target
            .request('POST', TRANSITIONS(v.id), token, nextMove(v))
            .catch((error: Error) => ({ status: 0, body: error.message }));
          const answered = performance.now();
          if (res.status === 200) applyMove(v);
          else await resynchronise(service, v);
          if (answered - startedAt < SETTLE_MS) continue;
          counted++;
          if (res.status !== 200) failed++;
          tally.latencies.push(answered - sent);
        }
      }),
    );
    const measuredSeconds = (performance.now() - startedAt - SETTLE_MS) / 1000;
    tally.requests += counted;
    tally.seconds += measuredSeconds;
    tally.failures += failed;
    return counted / measuredSeconds;
  };
}
