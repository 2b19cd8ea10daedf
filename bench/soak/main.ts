/**
 * Soak: a steady, open-loop mix of list queries and status changes against one spawned service
 * (APP_ROLE=all), its own redis-server and a local webhook receiver, for SOAK_SECONDS (600).
 * Reports errors (target 0), p99 per route per minute, the service's RSS and Redis used_memory
 * at the start and the end, and whether every webhook arrived.
 *
 * Env: SOAK_SECONDS (600), SOAK_RATE requests/s (60), SOAK_OUT (a JSON file for the raw figures),
 * SOAK_DATABASE_URL (default: DATABASE_URL renamed to kyc_soak_bench; dropped and rebuilt each run).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Server, createServer } from 'node:http';
import { AddressInfo, createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from 'pg';
import { createDatabaseIfMissing, runMigrations } from 'src/database/migrate';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 60);
const MAX_IN_FLIGHT = 200;
const ACCOUNTS = 20;
const SEED_VERIFICATIONS = 2_000;
const SERVICE_MAIN = join(__dirname, '..', '..', 'src', 'main.js');
const log = (line: string): void => void process.stdout.write(`${line}\n`);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function soakDatabaseUrl(): string {
  const url = new URL(
    process.env.SOAK_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/kyc',
  );
  if (!process.env.SOAK_DATABASE_URL) url.pathname = '/kyc_soak_bench';
  if (!/bench/.test(url.pathname)) throw new Error(`Refusing to use ${url.pathname}: its name does not say bench`);
  return url.toString();
}

async function freshDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const admin = new Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  await admin.end();
  await createDatabaseIfMissing(databaseUrl);
  await runMigrations(databaseUrl);
}

async function waitForHttp(url: string, child: ChildProcess, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`${what} did not start`);
}

async function startRedis(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const redis = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  redis.on('error', () => undefined);
  for (let i = 0; ; i += 1) {
    try {
      await redis.connect();
      break;
    } catch {
      if (i > 50) throw new Error('redis-server did not start');
      await sleep(100);
    }
  }
  redis.disconnect();
  return { child, url: `redis://127.0.0.1:${port}` };
}

function startReceiver(): Promise<{ server: Server; url: string; ids: Map<string, number> }> {
  const ids = new Map<string, number>();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      ids.set(id, (ids.get(id) ?? 0) + 1);
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, ids, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` }),
    ),
  );
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Math.round(Number(match[1]) / 1024) : NaN;
}

async function redisUsedMb(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Math.round((Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN) / 1024 / 1024) * 10) / 10;
}

function p99(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]);
}

interface Call {
  route: string;
  method: 'GET' | 'POST';
  path: string;
  token: string;
  body?: unknown;
  expect: number;
  /** Runs when the call answered as expected (the next step of a verification waits for it). */
  then?: (json: Record<string, unknown>) => void;
}

async function main(): Promise<void> {
  const databaseUrl = soakDatabaseUrl();
  log(`soak: ${SECONDS} s at ${RATE} requests/s against ${SERVICE_MAIN}`);
  await freshDatabase(databaseUrl);
  const redisServer = await startRedis();
  const receiver = await startReceiver();
  const port = await freePort();
  const admin = randomBytes(24).toString('base64url');
  const internal = randomBytes(24).toString('base64url');
  const service = spawn(process.execPath, [SERVICE_MAIN], {
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisServer.url,
      QUEUE_PREFIX: 'soak',
      ADMIN_TOKEN: admin,
      INTERNAL_API_TOKEN: internal,
      SECRET_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '0',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_ALLOW_INSECURE_URLS: 'true',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: 1 });
  const db = new Client({ connectionString: databaseUrl });
  try {
    await waitForHttp(`${base}/health/live`, service, 'the service');
    await db.connect();
    const call = async (
      method: string,
      path: string,
      token: string,
      body?: unknown,
    ): Promise<{ status: number; json: Record<string, unknown> }> => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      return { status: res.status, json: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : {} };
    };

    const accounts: { id: string; secret: string }[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const res = await call('POST', '/api/v1/admin/accounts', admin, { name: `soak ${i}`, webhook_url: receiver.url });
      accounts.push({ id: String(res.json.id), secret: String(res.json.webhook_secret) });
    }
    const known: { id: string; account: number }[] = [];
    for (let i = 0; i < SEED_VERIFICATIONS; i += 1) {
      const account = i % ACCOUNTS;
      const res = await call('POST', '/api/v1/internal/kyc/verifications', internal, {
        account_id: accounts[account].id,
        external_user_id: `soak-user-${i}`,
        applicant: { first_name: 'Ada', last_name: `Lovelace${i}`, email: `ada${i}@example.com` },
      });
      known.push({ id: String(res.json.id), account });
    }
    log(`seeded ${ACCOUNTS} accounts and ${SEED_VERIFICATIONS} verifications`);

    // Verifications moving through the state machine: each step is one transition.
    const moving: { id: string; next: 'processing' | 'approved' | 'rejected' }[] = [];
    let counter = 0;
    const nextCall = (): Call => {
      counter += 1;
      const account = counter % ACCOUNTS;
      const secret = accounts[account].secret;
      const pick = counter % 20;
      if (pick < 4)
        return {
          route: 'GET list',
          method: 'GET',
          path: '/api/v1/public/kyc/verifications?limit=20',
          token: secret,
          expect: 200,
        };
      if (pick < 6)
        return {
          route: 'GET list status',
          method: 'GET',
          path: '/api/v1/public/kyc/verifications?status=approved,rejected&sort=-updated_at',
          token: secret,
          expect: 200,
        };
      if (pick < 8)
        return {
          route: 'GET list q',
          method: 'GET',
          path: `/api/v1/public/kyc/verifications?q=lovelace${counter % 97}`,
          token: secret,
          expect: 200,
        };
      if (pick < 10) {
        const v = known[counter % known.length];
        return {
          route: 'GET detail',
          method: 'GET',
          path: `/api/v1/public/kyc/verifications/${v.id}`,
          token: accounts[v.account].secret,
          expect: 200,
        };
      }
      if (pick < 12)
        return {
          route: 'GET webhook-events',
          method: 'GET',
          path: '/api/v1/public/kyc/webhook-events?limit=50',
          token: secret,
          expect: 200,
        };
      if (pick < 14 || moving.length === 0) {
        const then = (json: Record<string, unknown>): void =>
          void moving.push({ id: String(json.id), next: 'processing' });
        return {
          route: 'POST create',
          method: 'POST',
          path: '/api/v1/internal/kyc/verifications',
          token: internal,
          body: { account_id: accounts[account].id, external_user_id: `soak-new-${counter}` },
          expect: 201,
          then,
        };
      }
      const step = moving.shift() as (typeof moving)[number];
      const body =
        step.next === 'rejected' ? { status: 'rejected', rejection_reasons: ['other'] } : { status: step.next };
      const decision = counter % 2 ? 'approved' : 'rejected';
      const then = step.next === 'processing' ? () => void moving.push({ id: step.id, next: decision }) : undefined;
      return {
        route: 'POST transition',
        method: 'POST',
        path: `/api/v1/internal/kyc/verifications/${step.id}/transitions`,
        token: internal,
        body,
        expect: 200,
        then,
      };
    };

    const minutes: Map<string, number[]>[] = [];
    const errors: Record<string, number> = {};
    let inFlight = 0;
    let skipped = 0;
    let sent = 0;
    const samples: { minute: number; rss_mb: number; redis_mb: number }[] = [];
    const sample = async (minute: number): Promise<void> => {
      samples.push({ minute, rss_mb: rssMb(service.pid as number), redis_mb: await redisUsedMb(redis) });
    };
    await sample(0);
    const started = Date.now();
    const interval = 1000 / RATE;
    const pending: Promise<void>[] = [];
    let lastMinuteSampled = 0;
    for (let tick = 0; ; tick += 1) {
      const due = started + tick * interval;
      if (due - started >= SECONDS * 1000) break;
      if (due > Date.now()) await sleep(due - Date.now());
      const minute = Math.floor((Date.now() - started) / 60_000);
      if (minute > lastMinuteSampled) {
        lastMinuteSampled = minute;
        await sample(minute);
      }
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped += 1;
        continue;
      }
      const c = nextCall();
      inFlight += 1;
      sent += 1;
      const at = performance.now();
      const done = call(c.method, c.path, c.token, c.body)
        .then((res) => {
          if (res.status !== c.expect)
            errors[`${c.route} ${res.status}`] = (errors[`${c.route} ${res.status}`] ?? 0) + 1;
          else c.then?.(res.json);
        })
        .catch((error: Error) => {
          errors[`${c.route} ${error.name}`] = (errors[`${c.route} ${error.name}`] ?? 0) + 1;
        })
        .finally(() => {
          inFlight -= 1;
          const bucket = (minutes[minute] ??= new Map());
          const list = bucket.get(c.route) ?? [];
          list.push(performance.now() - at);
          bucket.set(c.route, list);
        });
      pending.push(done);
      if (pending.length > 10_000) await Promise.all(pending.splice(0, 5_000));
    }
    await Promise.all(pending);
    await sample(Math.ceil(SECONDS / 60));

    // Every status change's webhook must arrive.
    let outbox = { events: 0, pending: 0 };
    for (let i = 0; i < 120; i += 1) {
      const res = await db.query<{ events: number; pending: number }>(
        `SELECT count(*)::int AS events, count(*) FILTER (WHERE delivery_status = 'pending')::int AS pending FROM webhook_events`,
      );
      outbox = res.rows[0];
      if (outbox.pending === 0) break;
      await sleep(1_000);
    }
    const ids = await db.query<{ id: string }>('SELECT id FROM webhook_events');
    const lost = ids.rows.filter((row) => !receiver.ids.has(row.id)).length;
    const duplicated = [...receiver.ids.values()].reduce((sum, n) => sum + n - 1, 0);

    const routes = [...new Set(minutes.flatMap((bucket) => (bucket ? [...bucket.keys()] : [])))].sort();
    log('');
    log(
      `p99 per route per minute (ms), ${sent} requests sent at ${RATE}/s over ${SECONDS} s, ${skipped} ticks skipped (over ${MAX_IN_FLIGHT} in flight)`,
    );
    log(['route'.padEnd(20), ...minutes.map((_, i) => `m${i + 1}`.padStart(6))].join(''));
    for (const route of routes) {
      log([route.padEnd(20), ...minutes.map((bucket) => String(p99(bucket?.get(route) ?? [])).padStart(6))].join(''));
    }
    const errorCount = Object.values(errors).reduce((a, b) => a + b, 0);
    log('');
    log(`errors: ${errorCount}${errorCount ? ` ${JSON.stringify(errors)}` : ''}`);
    log(
      `service RSS: ${samples[0].rss_mb} MB at start, ${samples[samples.length - 1].rss_mb} MB at end (per minute: ${samples.map((s) => s.rss_mb).join(' ')})`,
    );
    log(
      `redis used_memory: ${samples[0].redis_mb} MB at start, ${samples[samples.length - 1].redis_mb} MB at end (per minute: ${samples.map((s) => s.redis_mb).join(' ')})`,
    );
    log(
      `webhooks: ${outbox.events} events, ${outbox.events - lost} delivered, ${lost} lost, ${duplicated} duplicated, ${outbox.pending} still pending`,
    );
    if (process.env.SOAK_OUT) {
      const p99s = minutes.map((bucket) =>
        Object.fromEntries(routes.map((route) => [route, p99(bucket?.get(route) ?? [])])),
      );
      writeFileSync(
        process.env.SOAK_OUT,
        JSON.stringify(
          { seconds: SECONDS, rate: RATE, sent, skipped, errors, p99s, samples, outbox, lost, duplicated },
          null,
          2,
        ),
      );
    }
    process.exitCode = errorCount === 0 && lost === 0 ? 0 : 1;
  } finally {
    redis.disconnect();
    await db.end().catch(() => undefined);
    service.kill('SIGTERM');
    await new Promise((resolve) => (service.exitCode !== null ? resolve(null) : service.once('exit', resolve)));
    redisServer.child.kill('SIGKILL');
    receiver.server.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`soak failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
