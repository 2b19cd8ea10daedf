/**
 * The webhook bench's floor: a plain Bull queue on the same Redis (its own prefix) whose processor
 * signs the same body (Standard Webhooks, HMAC-SHA256) and POSTs it on a keep-alive node:http agent
 * at FLOOR_CONCURRENCY: no database, no per-account slots, nothing of src/. It stays up between
 * slices: on {jobs: n} over IPC it adds n jobs with addBulk, processes them, and answers
 * {started, delivered, failures} (started: Date.now() once the jobs are queued).
 * Env: REDIS_URL, FLOOR_QUEUE_PREFIX, FLOOR_CONCURRENCY, FLOOR_TARGET_URL, FLOOR_BODY, FLOOR_SECRET.
 */
import Bull from 'bull';
import { createHmac } from 'node:crypto';
import http from 'node:http';

export type FloorSlice = Record<'started' | 'delivered' | 'failures', number>;

const env = (name: string): string => process.env[name] ?? '';
const concurrency = Number(env('FLOOR_CONCURRENCY'));
const target = new URL(env('FLOOR_TARGET_URL'));
const body = env('FLOOR_BODY');
const key = Buffer.from(env('FLOOR_SECRET').replace(/^whsec_/, ''), 'base64');
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const queue = new Bull<{ n: number }>('floor-deliveries', {
  prefix: env('FLOOR_QUEUE_PREFIX'),
  redis: env('REDIS_URL'),
  defaultJobOptions: { attempts: 3, backoff: 100, removeOnComplete: { age: 3_600, count: 1_000 } },
});

function post(id: string): Promise<void> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'webhook-id': id,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
  };
  return new Promise((resolve, reject) => {
    const request = http.request(target, { method: 'POST', agent, headers, timeout: 10_000 });
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
    request.on('response', (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      response.on('end', () => (status >= 200 && status < 300 ? resolve() : reject(new Error(`HTTP ${status}`))));
    });
    request.end(body);
  });
}

let batch = 0;
let outcome = { done: 0, failures: 0, expected: 0, resolve: (): void => undefined };
void queue.process(concurrency, (job) => post(`msg_floor_${job.data.n}`));
queue.on('completed', () => void (++outcome.done === outcome.expected && outcome.resolve()));
queue.on('failed', () => outcome.failures++);

process.on('message', (message: { jobs: number }) => {
  void (async () => {
    const from = batch;
    batch += message.jobs;
    await queue.pause(true);
    for (let at = from; at < batch; at += 1_000) {
      const jobs = Array.from({ length: Math.min(1_000, batch - at) }, (_, i) => at + i);
      await queue.addBulk(jobs.map((n) => ({ data: { n }, opts: { jobId: `floor-${n}` } })));
    }
    const done = new Promise<void>((resolve) => (outcome = { done: 0, failures: 0, expected: message.jobs, resolve }));
    const started = Date.now();
    await queue.resume(true);
    await done;
    process.send?.({ started, delivered: outcome.done, failures: outcome.failures } satisfies FloorSlice);
  })();
});
process.on('SIGTERM', () => void queue.close().then(() => process.exit(0)));
process.send?.({ ready: true });
