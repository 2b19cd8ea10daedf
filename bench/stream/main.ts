/**
 * npm run bench:stream — the event stream (GET …/webhook-events/stream) of one APP_ROLE=api process:
 * replay events/s of one stream beside a floor (the same rows read in pages and framed as SSE in this
 * process, no HTTP, no signing); commit→message at a paced --rate of status changes with --streams
 * open (--accounts accounts, the rest spread round robin); memory per open stream; and, idle with
 * them open for --idle s, the service's CPU and the statements PostgreSQL ran.
 */
import { readFileSync } from 'node:fs';
import { createParser } from 'eventsource-parser';
import { Client } from 'pg';
import { apiClient, concurrently, createBenchData, change } from '../harness/api';
import { freshBench } from '../harness/db';
import { parseFlags } from '../harness/flags';
import { pacedChanges } from '../harness/loads';
import { cpuSeconds, runBench, startService } from '../harness/processes';
import { fmt, footer, log, table, verdict } from '../harness/report';
import { serviceEnv } from '../harness/service-env';
import { percentile } from '../harness/slices';

const PREFIX = 'kyc_streambench';
const PATH = '/api/v1/public/kyc/webhook-events/stream';

type Message = { id: string; at: number; body: string };

/** An open stream that records every message with its arrival time. */
async function openStream(url: string, secret: string, since?: string) {
  const abort = new AbortController();
  const query = since ? `?since=${since}` : '';
  const res = await fetch(`${url}${PATH}${query}`, {
    headers: { authorization: `Bearer ${secret}` },
    signal: abort.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`stream: HTTP ${res.status} ${await res.text()}`);
  const messages: Message[] = [];
  const parser = createParser({
    onEvent: (e) => {
      const data = JSON.parse(e.data) as { id: string; body: string };
      messages.push({ id: data.id, at: Date.now(), body: data.body });
    },
  });
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // closed
    }
  })();
  return { messages, close: () => abort.abort() };
}

const rssKb = (pid: number | undefined): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

/**
 * The service's used JS heap (its /metrics), the least of `samples` reads `everyMs` apart: the
 * reading closest to what survives a garbage collection, which RSS does not show (it moved by
 * −224 to +71 KB per stream between runs).
 */
async function heapUsedKb(url: string, samples: number, everyMs: number): Promise<number> {
  let least = Infinity;
  for (let i = 0; i < samples; i++) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const bytes = Number(/^nodejs_heap_size_used_bytes ([\d.e+]+)$/m.exec(text)?.[1] ?? NaN);
    least = Math.min(least, bytes / 1024);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return least;
}

async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function parseOptions(argv: string[]) {
  return parseFlags(argv, {}, { streams: 100, accounts: 20, rate: 100, seconds: 20, replay: 2_000, idle: 15 });
}

runBench('bench:stream', parseOptions, async (options, lab) => {
  const databaseUrl = await freshBench(lab, 'BENCH_STREAM_DATABASE_URL', 'kyc_stream_bench', [PREFIX]);
  const perAccount = Math.ceil(options.streams / options.accounts);
  const env = serviceEnv(databaseUrl, PREFIX, { APP_ROLE: 'api', STREAMS_PER_ACCOUNT: String(perAccount + 1) });
  const service = await lab.start(startService('api', env));
  const api = apiClient(service.url, 64);
  lab.defer(() => api.close());
  const { secrets, verifications } = await createBenchData(
    api,
    options.accounts,
    options.accounts * 10,
    () => 'http://127.0.0.1:9/hook',
  );
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  lab.defer(() => db.end());

  // Idle: the service's CPU and the statements PostgreSQL ran for it, nothing happening, without and with the streams.
  const statements = async (): Promise<number> =>
    Number(
      (await db.query(`SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()`)).rows[0]
        .xact_commit,
    );
  const idle = async (): Promise<[number, number]> => {
    const [cpu0, q0] = [cpuSeconds(service.child.pid), await statements()];
    await new Promise((resolve) => setTimeout(resolve, options.idle * 1000));
    return [
      ((cpuSeconds(service.child.pid) - cpu0) / options.idle) * 100,
      ((await statements()) - q0 - 1) / options.idle,
    ];
  };
  // Counted from pg_stat_database, which a backend idle since the seeding reports up to 10 s late
  // (and the seeded tables' autovacuum would commit meanwhile): the baseline read 17–32 statements/s
  // more than with the streams open. Vacuumed now, and a settle longer than that delay.
  await db.query('VACUUM ANALYZE');
  await new Promise((resolve) => setTimeout(resolve, 12_000));
  const [baseCpu, baseQps] = await idle();
  // Memory: RSS and the least used heap before and after opening the streams, settled.
  const rss0 = rssKb(service.child.pid);
  const heap0 = await heapUsedKb(service.url, 10, 300);
  const streams = await Promise.all(
    Array.from({ length: options.streams }, (_, i) => openStream(service.url, secrets[i % options.accounts] as string)),
  );
  lab.defer(() => streams.forEach((s) => s.close()));
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const perStreamKb = (rssKb(service.child.pid) - rss0) / options.streams;
  // The streams' opening statements would be reported late into the window too (see above): 10 s.
  const heapPerStreamKb = ((await heapUsedKb(service.url, 20, 500)) - heap0) / options.streams;
  const [openCpu, openQps] = await idle();
  const [idleCpuPct, idleQps] = [openCpu - baseCpu, openQps - baseQps];

  // Latency: changes at --rate, each event on every stream of its account.
  log(`latency: ${options.rate * options.seconds} changes at ${options.rate}/s with ${options.streams} streams open`);
  const drive = await pacedChanges(api, verifications, options.rate, options.rate * options.seconds);
  const expected = drive.ok * perAccount;
  await until(() => streams.reduce((n, s) => n + s.messages.length, 0) >= expected, 30_000, 'the paced events');
  const latencies = streams.flatMap((s) =>
    s.messages.map((m) => {
      const v = (JSON.parse(m.body) as { data: { verification: { updated_at: string } } }).data.verification;
      return m.at - Date.parse(v.updated_at);
    }),
  );

  // Replay: --replay events of one account, then one stream resumed from before the first of them.
  const mine = verifications.filter((v) => v.account === 0);
  await concurrently(options.replay, async (i) => void (await change(api, api, mine[i % mine.length]!)), mine.length);
  const firstOwn = (
    await db.query(
      `SELECT e.id FROM webhook_events e JOIN accounts a ON a.id = e.account_id WHERE a.name = 'Bench 0' ORDER BY e.created_at, e.id LIMIT 1`,
    )
  ).rows[0].id as string;
  const total =
    (
      await db.query(
        `SELECT count(*)::int AS n FROM webhook_events e JOIN accounts a ON a.id = e.account_id WHERE a.name = 'Bench 0'`,
      )
    ).rows[0].n - 1;
  const t0 = Date.now();
  const replay = await openStream(service.url, secrets[0] as string, firstOwn);
  await until(() => replay.messages.length >= total, 60_000, 'the replay');
  const serviceRate = total / ((Date.now() - t0) / 1000);
  replay.close();
  // The floor: the same rows in pages of 200 in creation order, framed as SSE text, in this process.
  const f0 = Date.now();
  let [after, read, _framed] = [{ at: new Date(0), id: firstOwn }, 0, 0];
  for (;;) {
    const { rows } = await db.query(
      `SELECT e.id, e.type, e.created_at, e.body FROM webhook_events e JOIN accounts a ON a.id = e.account_id
        WHERE a.name = 'Bench 0' AND (e.created_at, e.id) > ($1, $2) ORDER BY e.created_at, e.id LIMIT 200`,
      [after.at, after.id],
    );
    for (const r of rows)
      _framed += `id: ${r.id}\nevent: ${r.type}\ndata: ${JSON.stringify({ id: r.id, body: r.body })}\n\n`.length;
    read += rows.length;
    if (rows.length < 200) break;
    after = { at: rows.at(-1).created_at, id: rows.at(-1).id };
  }
  const floorRate = read / ((Date.now() - f0) / 1000);

  log();
  const p = (q: number): string => fmt(percentile(latencies, q));
  log(
    table(
      ['measure', 'value', 'floor', 'ratio'],
      [
        [
          `replay events/s, one stream (${total} events)`,
          fmt(serviceRate),
          fmt(floorRate),
          fmt(serviceRate / floorRate, 2),
        ],
        [
          `commit→message p50 / p99 ms at ${options.rate}/s, ${options.streams} streams`,
          `${p(0.5)} / ${p(0.99)}`,
          '1000 (p99, contract)',
          fmt(percentile(latencies, 0.99) / 1000, 2),
        ],
        ['memory per open stream, KB (least used heap)', fmt(heapPerStreamKb, 1), '', ''],
        ['memory per open stream, KB (RSS)', fmt(perStreamKb, 1), '', ''],
        [
          `idle with ${options.streams} streams: service CPU %, over none open`,
          fmt(idleCpuPct, 2),
          fmt(baseCpu, 2),
          '',
        ],
        [
          'idle: statements/s the open streams add',
          fmt(idleQps, 2),
          `${fmt(1 / 3, 2)} (one re-read per 3 s)`,
          fmt(idleQps / (1 / 3), 2),
        ],
      ],
    ),
  );
  log(verdict(percentile(latencies, 0.99) < 1000, `p99 commit→message < 1 s at ${options.rate}/s (${p(0.99)} ms)`));
  log(
    verdict(
      latencies.length >= expected,
      `every event on every stream of its account (${latencies.length}/${expected})`,
    ),
  );
  log(
    verdict(idleQps < options.streams / 5, `idle statements/s well under one per stream per 5 s (${fmt(idleQps, 2)})`),
  );
  await footer(databaseUrl, drive.errors);
});
