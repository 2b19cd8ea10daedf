import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { SecretKeyring, hashSecret } from 'src/accounts/secret-crypto';
import { backfillVerificationJson } from 'src/verifications/verification-json-backfill';
import { DOCUMENT_TYPES, REJECTION_REASONS } from 'src/verifications/verification.types';
import { log } from './report';
import { BENCH_SECRET_ENCRYPTION_KEY, benchSecret } from './service-env';

/** What the seeded benches (list, retention) share: accounts, verification rows, one insert path. */

const [FIRST_NAMES, LAST_NAMES, EMAIL_DOMAINS, COUNTRIES, PLANS] = [
  'Ada Alan Grace Linus Margaret Dennis Barbara Ken Frances Edsger Radia Donald Anna Hannah Joanna Annette Maria Mariana Jose Juan Sofia Lucia Mateo Chen Wei Yuki Hiroshi Aiko Priya Arjun Fatima Omar Amara Chinedu Olga Ivan Sven Ingrid Pierre Camille Giulia Marco Emma Noah Olivia Liam Zoe Kofi',
  'Lovelace Turing Hopper Torvalds Hamilton Ritchie Liskov Thompson Allen Dijkstra Perlman Knuth Smith Johnson Williams Brown Jones Garcia Martinez Rodriguez Hernandez Lopez Gonzalez Wilson Anderson Taylor Moore Jackson Martin Lee Nguyen Tanaka Yamamoto Suzuki Sato Kim Park Wang Zhang Li Patel Sharma Singh Khan Okafor Adeyemi Mensah Ivanova Petrov Novak Kowalski Muller Schmidt Rossi Bianchi Dubois Lefebvre Andersson Johansson Hansen Silva Santos',
  'example.com mail.example.org inbox.example.net corp.example.io post.example.de',
  'GB US DE FR ES IT NL PL SE NG IN JP BR CA',
  'gold silver basic',
].map((words) => words.split(' ')) as [string[], string[], string[], string[], string[]];

/** A connection tuned for bulk seeding. */
async function seedingClient(databaseUrl: string): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(`SET maintenance_work_mem = '512MB'; SET work_mem = '256MB'; SET synchronous_commit = off`);
  return client;
}

/** Runs the statements two at a time (the bench machine has two cores). */
export async function inParallel(databaseUrl: string, statements: string[]): Promise<void> {
  const clients = await Promise.all([seedingClient(databaseUrl), seedingClient(databaseUrl)]);
  const queue = [...statements];
  const drain = async (client: Client): Promise<void> => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) await client.query(next);
  };
  try {
    await Promise.all(clients.map(drain));
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

/** A SQL text[] literal of `values`, and its element number `index` (an integer SQL expression). */
const pick = (values: readonly string[], index: string): string =>
  `(ARRAY[${values.map((value) => `'${value.replace(/'/g, "''")}'`).join(',')}]::text[])[1 + (${index}) % ${values.length}]`;

/** Account index → its deterministic id, in SQL. */
export const accountIdSql = (index: string): string => `md5('kyc-bench-account-' || ${index})::uuid`;

/** A UUIDv7-shaped id from a timestamp and a seed text, like the service's (time-ordered). */
export function uuidV7Sql(at: string, seed: string): string {
  return `(lpad(to_hex(floor(extract(epoch FROM ${at}) * 1000)::bigint), 12, '0') || '7' || substr(md5(${seed}), 1, 3)
           || substr('89ab', 1 + (get_byte(decode(md5(${seed}), 'hex'), 15) % 4), 1) || substr(md5(${seed}), 4, 15))::uuid`;
}

/** Accounts `from`..`to` without a webhook URL, created at `createdAt` (SQL), account i with the one secret benchSecret(i). */
export async function insertAccounts(client: Client, from: number, to: number, createdAt: string): Promise<void> {
  const keyring = new SecretKeyring([Buffer.from(BENCH_SECRET_ENCRYPTION_KEY, 'base64')]);
  const indexes = Array.from({ length: to - from + 1 }, (_, i) => from + i);
  const secrets = indexes.map(benchSecret);
  await client.query(
    `INSERT INTO accounts (id, name, webhook_url, created_at, updated_at)
     SELECT ${accountIdSql('i')}, 'Bench account ' || i, NULL, ${createdAt}, ${createdAt} FROM unnest($1::int[]) AS i`,
    [indexes],
  );
  await client.query(
    `INSERT INTO account_secrets (id, account_id, secret_hash, secret_ciphertext, created_at, expires_at)
     SELECT md5('kyc-bench-secret-' || i)::uuid, ${accountIdSql('i')}, hash, ciphertext, ${createdAt}, NULL
       FROM unnest($1::int[], $2::bytea[], $3::text[]) AS t(i, hash, ciphertext)`,
    [indexes, secrets.map((s) => hashSecret(s)), secrets.map((s) => keyring.seal(s))],
  );
}

/**
 * The verifications numbered `from`..`to` as one SELECT of the columns insertVerifications fills.
 * Every attribute comes from hashint8 of n (h1 … h6), so every seed is the same. The seed chooses,
 * as SQL over n and the hashes, `created` (e.g. a slot of a window per n, jitter from h6), the
 * `account` index (h1 is free for it) and the `status` (of h2 and created); the rest follows the
 * status as the service leaves it: submitted within 10 minutes of creation, decided within the
 * hour after; a pending one has no document (a fifth no applicant either); one pending in ten is a
 * retake (version 3); a rejected one has one reason; half have a plan in metadata.
 */
export function verificationRows(from: number, to: number, shape: Record<'created' | 'account' | 'status', string>) {
  const h = [1, 2, 3, 4, 5, 6].map((k) => `(hashint8(n::bigint * 8 + ${k})::bigint + 2147483648) AS h${k}`);
  const ms = (sql: string): string => `(${sql}) * interval '1 millisecond'`;
  return `
    SELECT ${uuidV7Sql('created', 'n::text')}, ${accountIdSql('account_index')}, 'user-' || (h5 % 10000000), status,
      CASE status WHEN 'pending' THEN CASE WHEN h2 % 10 = 0 THEN 3 ELSE 1 END WHEN 'processing' THEN 2 ELSE 3 END,
      created,
      CASE status WHEN 'pending' THEN CASE WHEN h2 % 10 = 0 THEN decided ELSE created END
                  WHEN 'processing' THEN submitted ELSE decided END,
      CASE WHEN status = 'pending' AND h2 % 10 <> 0 THEN NULL ELSE submitted END,
      CASE WHEN status IN ('approved', 'rejected') THEN decided END,
      CASE WHEN status = 'pending' AND h3 % 5 = 0 THEN NULL ELSE jsonb_build_object(
        'first_name', first_name, 'last_name', last_name,
        'date_of_birth', to_char(date '1950-01-01' + (h4 % 20000)::int, 'YYYY-MM-DD'),
        'email', lower(first_name) || '.' || lower(last_name) || (h5 % 1000) || '@' || ${pick(EMAIL_DOMAINS, 'h4')}) END,
      CASE WHEN status <> 'pending' THEN
        jsonb_build_object('type', ${pick(DOCUMENT_TYPES, 'h5')}, 'country', ${pick(COUNTRIES, 'h3')}) END,
      CASE WHEN status = 'rejected' THEN ARRAY[${pick(REJECTION_REASONS, 'h4')}] ELSE '{}' END,
      CASE WHEN h1 % 2 = 0 THEN jsonb_build_object('plan', ${pick(PLANS, 'h2')}) ELSE '{}'::jsonb END
    FROM (SELECT n, ${h.join(', ')} FROM generate_series(${from}, ${to}) AS n) AS hashed
    CROSS JOIN LATERAL (SELECT date_trunc('milliseconds', ${shape.created}) AS created) AS c
    CROSS JOIN LATERAL (SELECT ${shape.account} AS account_index, ${shape.status} AS status,
      ${pick(FIRST_NAMES, 'h3')} AS first_name, ${pick(LAST_NAMES, `h3 / ${FIRST_NAMES.length}`)} AS last_name,
      created + ${ms('h4 % 600000')} AS submitted, created + ${ms('h4 % 600000 + 1000 + h5 % 3600000')} AS decided) AS s`;
}

/**
 * The one way the seeds put rows into verifications: each verificationRows SELECT as one
 * INSERT … SELECT, two at a time.
 */
export async function insertVerifications(databaseUrl: string, rowSets: string[]): Promise<void> {
  const columns = `id, account_id, external_user_id, status, version, created_at, updated_at, submitted_at,
    decided_at, applicant, document, rejection_reasons, metadata`;
  const inserts = rowSets.map((rows) => `INSERT INTO verifications (${columns}) ${rows}`);
  await inParallel(databaseUrl, inserts);
}

/** Stores every missing verification JSON with the service's own backfill, `batch` rows a transaction (after the index rebuild: it walks one). */
export async function renderJson(databaseUrl: string, batch = 10_000): Promise<number> {
  const dataSource = new DataSource({ type: 'postgres', url: databaseUrl });
  await dataSource.initialize();
  try {
    return (await backfillVerificationJson(dataSource, batch)).rows;
  } finally {
    await dataSource.destroy();
  }
}

/** Drops the secondary indexes of `tables` for a bulk insert; returns their definitions, to rebuild. */
async function dropSecondaryIndexes(client: Client, tables: string[]): Promise<string[]> {
  const defs = await client.query<{ name: string; def: string }>(
    `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
      WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    [tables],
  );
  for (const { name } of defs.rows) await client.query(`DROP INDEX "${name}"`);
  return defs.rows.map((row) => row.def);
}

/**
 * Seeds a freshly migrated bench database: accounts 0 … `accounts` - 1 created at `createdAt` (SQL);
 * then `load`, with the secondary indexes of `tables` dropped and rebuilt afterwards from their own
 * definitions, so the measured indexes are the migrations'; then VACUUM (ANALYZE). Returns the seconds it took.
 */
export async function seedBenchDatabase(
  databaseUrl: string,
  { accounts, createdAt, tables }: { accounts: number; createdAt: string; tables: string[] },
  load: (client: Client, progress: (step: string) => void) => Promise<void>,
): Promise<number> {
  const started = Date.now();
  const progress = (step: string): void =>
    log(`seeding: ${step} (${Math.round((Date.now() - started) / 1000)} s so far)`);
  const client = await seedingClient(databaseUrl);
  try {
    await insertAccounts(client, 0, accounts - 1, createdAt);
    const defs = await dropSecondaryIndexes(client, tables);
    progress(`${defs.length} secondary indexes dropped`);
    await load(client, progress);
    progress('rebuilding indexes');
    await inParallel(databaseUrl, defs);
    if (tables.includes('verifications')) progress(`stored JSON of ${await renderJson(databaseUrl)} verifications`);
    progress('vacuum analyze');
    const vacuums = [...tables, 'accounts', 'account_secrets'].map((t) => `VACUUM (ANALYZE) ${t}`);
    await inParallel(databaseUrl, vacuums);
    return (Date.now() - started) / 1000;
  } finally {
    await client.end();
  }
}
