import { Client } from 'pg';
import { runMigrations } from 'src/database/migration-runner';
import { ApiClient, BenchVerification, apiClient } from '../harness/api';
import { benchDatabaseUrlFrom, cleanRedisPrefixes, dropBenchDatabase, recreateBenchDatabase } from '../harness/db';
import { BenchProcess, Lab, startService } from '../harness/processes';
import { fmt, log } from '../harness/report';
import { accountIdSql } from '../harness/seed';
import { REDIS_URL, benchSecret, serviceEnv } from '../harness/service-env';
import { BenchReceiver } from '../webhooks/receiver';
import { BIG, MEDIUM, seedYear } from './seed';

/** The two databases the year bench compares: `big` (a year) and `small` (the same shape, 100,000 rows). */
export type SideName = 'big' | 'small';

/** One database and what the bench runs on it: an api and a worker process, a webhook receiver. */
export interface Side {
  name: SideName;
  databaseUrl: string;
  db: Client;
  api: BenchProcess;
  /** Its delivery worker (stopped while a pass runs in an API process: that process is then the only one delivering). */
  worker: BenchProcess;
  client: ApiClient;
  receiver: BenchReceiver;
  /** The service's environment on this database (for the retention workers the passes start). */
  env: Record<string, string>;
  /** The accounts with an endpoint at the receiver: the big one and the medium ones. */
  hooked: number[];
  /** Their verifications still moving (pending or processing), newest first, for status changes. */
  moving: BenchVerification[];
}

const HOOKED = [BIG, ...Array.from({ length: MEDIUM.count }, (_, i) => MEDIUM.first + i)];

/** The marker the seed leaves last: a database holding it with the same size is complete and can be reused. */
async function seededWith(db: Client): Promise<string | undefined> {
  const { rows } = await db
    .query<{ shape: string }>(`SELECT shape FROM bench_seed WHERE to_regclass('bench_seed') IS NOT NULL`)
    .catch(() => ({ rows: [] as { shape: string }[] }));
  return rows[0]?.shape;
}

/**
 * Opens one side: its database seeded with `total` verifications over `accounts` small accounts
 * (or, with `reuse`, kept from an earlier run of the same size), its api and worker (no event
 * retention: the passes are measured on their own), the hooked accounts' endpoints at its receiver;
 * `beforeServices` runs on the seeded database before any process of the service starts.
 */
export async function openSide(
  lab: Lab,
  name: SideName,
  total: number,
  accounts: number,
  flags: Flags,
  beforeServices: (databaseUrl: string) => Promise<void> = async () => undefined,
): Promise<Side> {
  const databaseUrl = benchDatabaseUrlFrom(`BENCH_YEAR_${name.toUpperCase()}_DATABASE_URL`, `kyc_year_${name}_bench`);
  const prefix = `kyc_yearbench_${name}`;
  const shape = `${total} verifications, ${accounts} small accounts`;
  const probe = new Client({ connectionString: databaseUrl });
  const kept = flags.reuse
    ? await probe.connect().then(
        () => seededWith(probe),
        () => undefined,
      )
    : undefined;
  await probe.end().catch(() => undefined);
  if (kept === shape) {
    await runMigrations(databaseUrl);
    log(`${name}: reusing the database seeded with ${shape}; ${await vacuumed(databaseUrl)}`);
  } else {
    await recreateBenchDatabase(databaseUrl);
    const seconds = await seedYear(databaseUrl, total, accounts);
    const marker = new Client({ connectionString: databaseUrl });
    await marker.connect();
    await marker.query(`CREATE TABLE bench_seed AS SELECT $1::text AS shape`, [shape]).finally(() => marker.end());
    log(`${name}: seeded ${shape} in ${fmt(seconds, 1)} s`);
  }
  if (!flags['keep-database']) lab.defer(() => dropBenchDatabase(databaseUrl));
  await cleanRedisPrefixes(REDIS_URL, [prefix]);
  lab.defer(() => cleanRedisPrefixes(REDIS_URL, [prefix]));
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  lab.defer(() => db.end());
  await beforeServices(databaseUrl);
  const receiver = await BenchReceiver.open(lab);
  const env = serviceEnv(databaseUrl, prefix, { WEBHOOK_EVENT_RETENTION_DAYS: '0' });
  const api = await lab.start(startService(`${name} api`, { ...env, APP_ROLE: 'api' }));
  const worker = await lab.start(startService(`${name} worker`, { ...env, APP_ROLE: 'worker' }));
  const client = apiClient(api.url, 256);
  lab.defer(() => client.close());
  for (const account of HOOKED) {
    const res = await client.request('PATCH', '/api/v1/public/kyc/webhook-endpoint', benchSecret(account), {
      url: receiver.urlFor(account),
    });
    if (res.status !== 200) throw new Error(`${name}: PATCH webhook-endpoint: HTTP ${res.status} ${res.body}`);
  }
  const { rows } = await db.query<{ id: string; account: number; status: 'pending' | 'processing'; version: number }>(
    `SELECT v.id, i AS account, v.status, v.version
       FROM unnest($1::int[]) AS i JOIN verifications v ON v.account_id = ${accountIdSql('i')}
      WHERE v.status IN ('pending', 'processing') ORDER BY v.created_at DESC LIMIT 2000`,
    [HOOKED],
  );
  const moving = rows.map((row) => ({ ...row, secret: benchSecret(row.account) }));
  if (moving.length === 0) throw new Error(`${name}: no verification of a hooked account is still moving`);
  return { name, databaseUrl, db, api, worker, client, receiver, env, hooked: HOOKED, moving };
}

/**
 * VACUUM (ANALYZE) of a reused database, as the seed ends with one: the runs before left the dead rows
 * of their status changes and deliveries, which autovacuum would have cleaned. Where it is off (as on
 * CI's server) they piled up run after run: on one seed, another client's quiet list p99 went from
 * 20-26 ms to 48-57 ms by the third run, and back to 15-20 ms once 199,043 dead rows were vacuumed
 * (2026-12-02, docs/performance.md).
 */
async function vacuumed(databaseUrl: string): Promise<string> {
  const db = new Client({ connectionString: databaseUrl });
  await db.connect();
  try {
    const started = Date.now();
    const { rows } = await db.query<{ dead: string }>(`SELECT sum(n_dead_tup)::text AS dead FROM pg_stat_user_tables`);
    await db.query('VACUUM (ANALYZE)');
    const off = (await db.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]?.autovacuum === 'off';
    const seconds = fmt((Date.now() - started) / 1000, 1);
    const note = off ? ' (autovacuum is off on this server: the rows this run leaves stay until the next)' : '';
    return `${fmt(Number(rows[0]?.dead ?? 0))} dead rows vacuumed in ${seconds} s${note}`;
  } finally {
    await db.end();
  }
}

export type Flags = { reuse?: boolean; 'keep-database'?: boolean };
