import http from 'node:http';

export interface Response {
  status: number;
  body: string;
  /** Date.now() when the response had fully arrived. */
  at: number;
}

/** A keep-alive JSON client for the service's admin and internal APIs. */
export class ApiClient {
  private readonly agent: http.Agent;

  constructor(
    private readonly baseUrl: string,
    maxSockets: number,
  ) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets });
  }

  request(method: string, path: string, token: string, body?: unknown): Promise<Response> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.baseUrl}${path}`, {
        method,
        agent: this.agent,
        headers: {
          authorization: `Bearer ${token}`,
          ...(text === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }),
        },
      });
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject);
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() }),
        );
        res.on('error', reject);
      });
      req.end(text);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface BenchVerification {
  id: string;
  account: number;
  /** The account's webhook secret: also its public API credential (for resynchronising). */
  secret: string;
  status: 'pending' | 'processing';
  version: number;
  /** The change in flight on this verification, if any: changes of one verification never overlap. */
  busy?: Promise<void>;
}

export interface DriveResult {
  started: number;
  finished: number;
  ok: number;
  errors: number;
  firstError?: string;
  /** `${verificationId}:${version}` → Date.now() when the 200 arrived (client-side commit bound). */
  responded: Map<string, number>;
  /** Paced runs: how far behind its schedule the driver was at worst, ms. */
  maxLagMs: number;
}

const TRANSITIONS = (id: string): string => `/api/v1/internal/kyc/verifications/${id}/transitions`;

/**
 * A status change that can repeat for ever: pending ↔ processing (a retake request and a new
 * submission). Each one commits a transition and its outbox event, so it yields one webhook.
 */
async function change(api: ApiClient, token: string, v: BenchVerification, result: DriveResult): Promise<void> {
  const next = v.status === 'pending' ? 'processing' : 'pending';
  try {
    const res = await api.request('POST', TRANSITIONS(v.id), token, { status: next, expected_version: v.version });
    if (res.status !== 200) throw new Error(`HTTP ${res.status} ${res.body.slice(0, 200)}`);
    v.status = next;
    v.version++;
    result.responded.set(`${v.id}:${v.version}`, res.at);
    result.ok++;
  } catch (error) {
    result.errors++;
    result.firstError ??= (error as Error).message;
    // Resynchronise with the service so the next change of this verification is valid again.
    const res = await api.request('GET', `/api/v1/public/kyc/verifications/${v.id}`, v.secret).catch(() => undefined);
    if (res?.status === 200) {
      const current = JSON.parse(res.body) as { status: 'pending' | 'processing'; version: number };
      v.status = current.status;
      v.version = current.version;
    }
  }
}

function newResult(): DriveResult {
  return { started: Date.now(), finished: 0, ok: 0, errors: 0, responded: new Map(), maxLagMs: 0 };
}

/** `total` changes as fast as `connections` closed-loop clients go; each client owns its verifications. */
export async function driveFlat(
  api: ApiClient,
  token: string,
  verifications: BenchVerification[],
  total: number,
  connections: number,
): Promise<DriveResult> {
  const result = newResult();
  let issued = 0;
  await Promise.all(
    Array.from({ length: connections }, async (_, client) => {
      const own = verifications.filter((_v, i) => i % connections === client);
      for (let k = 0; issued < total; k++) {
        issued++;
        await change(api, token, own[k % own.length] as BenchVerification, result);
      }
    }),
  );
  result.finished = Date.now();
  return result;
}

/**
 * `total` changes at `rate` per second, open loop: change i is sent at start + i/rate whether or
 * not earlier ones have answered (a change waits only for the previous change of its own
 * verification, which with enough verifications never happens).
 */
export async function drivePaced(
  api: ApiClient,
  token: string,
  verifications: BenchVerification[],
  total: number,
  rate: number,
): Promise<DriveResult> {
  const result = newResult();
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    result.maxLagMs = Math.max(result.maxLagMs, performance.now() - due);
    const v = verifications[i % verifications.length] as BenchVerification;
    const previous = v.busy ?? Promise.resolve();
    const running: Promise<void> = previous
      .then(() => change(api, token, v, result))
      .finally(() => {
        inFlight.delete(running);
        if (v.busy === running) v.busy = undefined;
      });
    v.busy = running;
    inFlight.add(running);
  }
  await Promise.all(inFlight);
  result.finished = Date.now();
  return result;
}
