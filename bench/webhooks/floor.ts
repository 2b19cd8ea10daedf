/**
 * The floors of the webhook benchmark, each run by main.ts as its own process (as the service's
 * worker is) and reporting one JSON line on stdout when done:
 *
 * - FLOOR_MODE=bull: a plain Bull queue on the same Redis (its own prefix), fed FLOOR_JOBS jobs, whose
 *   processor signs and POSTs the same body with the service's own HTTP client (keep-alive agent,
 *   same time-out) at FLOOR_CONCURRENCY — no database, no per-account slots.
 * - FLOOR_MODE=raw: FLOOR_CONCURRENCY loops POSTing the same signed body with a bare node:http
 *   keep-alive agent until FLOOR_JOBS were sent — no queue at all.
 *
 * Env: FLOOR_MODE, FLOOR_JOBS, FLOOR_CONCURRENCY, FLOOR_TARGET_URL, FLOOR_BODY (the payload),
 * FLOOR_SECRET (whsec_…), and for bull REDIS_URL, FLOOR_QUEUE_PREFIX, WEBHOOK_TIMEOUT_MS.
 */
import Bull from 'bull';
import http from 'node:http';
import { redisOptions } from 'src/webhooks/webhook-queue.factory';
import { DELIVERY_JOB_OPTIONS, DELIVERY_QUEUE_SETTINGS } from 'src/webhooks/webhook-queue.constants';
import { WebhookHttpClient } from 'src/webhooks/webhook-http.client';
import { webhookHeaders } from 'src/webhooks/webhook-signer';

export interface FloorResult {
  mode: string;
  /** Date.now() when the first POST could start (jobs already queued for bull). */
  started: number;
  finished: number;
  delivered: number;
  failures: number;
}

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const mode = env('FLOOR_MODE');
const jobs = Number(env('FLOOR_JOBS'));
const concurrency = Number(env('FLOOR_CONCURRENCY'));
const target = env('FLOOR_TARGET_URL');
const body = env('FLOOR_BODY');
const secrets = [env('FLOOR_SECRET')];

function report(result: FloorResult): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

async function bullFloor(): Promise<void> {
  const prefix = env('FLOOR_QUEUE_PREFIX');
  const queue = new Bull<{ n: number }>('floor-deliveries', {
    prefix,
    redis: redisOptions(process.env.REDIS_URL ?? 'redis://localhost:6379'),
    // The service's job options (removeOnComplete etc.) and lock settings, without its backoff.
    defaultJobOptions: { ...DELIVERY_JOB_OPTIONS, attempts: 3, backoff: 100 },
    settings: DELIVERY_QUEUE_SETTINGS,
  });
  const client = new WebhookHttpClient({
    timeoutMs: Number(process.env.WEBHOOK_TIMEOUT_MS ?? 10_000),
    allowPrivate: true,
  });
  await queue.empty();
  for (let from = 0; from < jobs; from += 1_000) {
    const batch = Array.from({ length: Math.min(1_000, jobs - from) }, (_, i) => ({
      data: { n: from + i },
      opts: { jobId: `floor-${from + i}` },
    }));
    await queue.addBulk(batch);
  }
  let delivered = 0;
  let failures = 0;
  const done = new Promise<void>((resolve) => {
    queue.on('completed', () => {
      if (++delivered === jobs) resolve();
    });
    queue.on('failed', () => {
      failures++;
    });
  });
  const started = Date.now();
  void queue.process(concurrency, async (job) => {
    const id = `msg_floor_bull_${job.data.n}`;
    const result = await client.post(target, webhookHeaders(id, new Date(), body, secrets), body);
    if (result.error !== null) throw new Error(result.error);
  });
  await done;
  const finished = Date.now();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  client.close();
  report({ mode, started, finished, delivered, failures });
}

async function rawFloor(): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const url = new URL(target);
  let next = 0;
  let delivered = 0;
  let failures = 0;
  const post = (n: number): Promise<boolean> =>
    new Promise((resolve) => {
      const headers = webhookHeaders(`msg_floor_raw_${n}`, new Date(), body, secrets);
      const request = http.request(url, {
        method: 'POST',
        agent,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'kyc-webhooks/1' },
      });
      request.on('error', () => resolve(false));
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve((response.statusCode ?? 0) >= 200 && (response.statusCode ?? 0) < 300));
      });
      request.end(body);
    });
  const started = Date.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let n = next++; n < jobs; n = next++) {
        if (await post(n)) delivered++;
        else failures++;
      }
    }),
  );
  const finished = Date.now();
  agent.destroy();
  report({ mode, started, finished, delivered, failures });
}

(mode === 'bull' ? bullFloor() : rawFloor()).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`floor ${mode} failed: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
