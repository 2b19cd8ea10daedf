import { accountIdSql, inParallel, insertVerifications, seedBenchDatabase, verificationRows } from '../harness/seed';
import { attemptsInsert, eventsInsert } from '../harness/seed-events';
import { fmt } from '../harness/report';

/**
 * A year of data, shaped as the outside measurement's (5,000,000 verifications: one account with a
 * fifth, 20 with 2 % each, the rest shared by the small accounts), at any size: verifications
 * created evenly over 365 days, oldest first (heap and ids in time order, as a live table's), the
 * last day's still moving (pending, processing or approved), the older ones decided (a quarter
 * rejected). Each has its status history and one event per version; an event is delivered by one
 * attempt, except 1 in 500 that failed after 8, and every event of the big account made during one
 * day 85 days ago (an outage: the skew a plan bet on recent failures gets wrong).
 */
export const BIG = 0;
export const MEDIUM = { first: 1, count: 20 };
/** The first small account; there are `accounts` of them. */
export const FIRST_SMALL = MEDIUM.first + MEDIUM.count;
const CHUNKS = 8;

const accountOf = (accounts: number): string =>
  `CASE WHEN h1 % 100 < 20 THEN ${BIG} WHEN h1 % 100 < 60 THEN ${MEDIUM.first} + (h1 / 100) % ${MEDIUM.count}
        ELSE ${FIRST_SMALL} + (h1 / 100) % ${accounts} END`;

/** Seeds a freshly migrated database with `total` verifications over the big, medium and `accounts` small accounts. */
export async function seedYear(databaseUrl: string, total: number, accounts: number): Promise<number> {
  const now = `'${new Date().toISOString()}'::timestamptz`;
  const yearAgo = `${now} - interval '365 days'`;
  const slotMs = Math.floor((365 * 86_400_000) / total);
  const tables = ['verifications', 'verification_status_history', 'webhook_events', 'webhook_attempts'];
  const shape = { accounts: FIRST_SMALL + accounts, createdAt: `${yearAgo} - interval '35 days'`, tables };
  /** The chunks' bounds on a timestamp column, for statements two at a time. */
  const chunks = (column: string): string[] =>
    Array.from({ length: CHUNKS }, (_, i) => {
      const at = (k: number): string => `${yearAgo} + ${k} * interval '${Math.ceil(366 / CHUNKS)} days'`;
      return `${column} >= ${i === 0 ? "'-infinity'" : at(i)} AND ${column} < ${i === CHUNKS - 1 ? "'infinity'" : at(i + 1)}`;
    });
  return seedBenchDatabase(databaseUrl, shape, async (_client, progress) => {
    progress(`${fmt(total)} verifications over ${fmt(FIRST_SMALL + accounts)} accounts`);
    const per = Math.ceil(total / CHUNKS);
    const rowSets = Array.from({ length: CHUNKS }, (_, i) => [i * per + 1, Math.min(total, (i + 1) * per)] as const)
      .filter(([from, to]) => from <= to)
      .map(([from, to]) =>
        verificationRows(from, to, {
          created: `${yearAgo} + ((n - 1) * ${slotMs}::bigint + h6 % ${slotMs}) * interval '1 millisecond'`,
          account: accountOf(accounts),
          status: `CASE WHEN n > ${total} - ${Math.ceil(total / 365)} THEN (ARRAY['pending', 'processing', 'approved'])[1 + h2 % 3]
                        WHEN h2 % 4 = 0 THEN 'rejected' ELSE 'approved' END`,
        }),
      );
    await insertVerifications(databaseUrl, rowSets);
    progress('status history, one row per version');
    await inParallel(
      databaseUrl,
      chunks('v.created_at').map(
        (where) => `INSERT INTO verification_status_history (verification_id, version, status, at)
          SELECT v.id, k.version, CASE k.version WHEN 1 THEN 'pending' WHEN 2 THEN 'processing' ELSE v.status END,
                 CASE k.version WHEN 1 THEN v.created_at WHEN 2 THEN coalesce(v.submitted_at, v.created_at) ELSE v.updated_at END
            FROM verifications v CROSS JOIN (VALUES (1), (2), (3)) AS k(version) WHERE k.version <= v.version AND ${where}`,
      ),
    );
    progress('events, one per version');
    const outage = `s.at >= ${now} - interval '86 days' AND s.at < ${now} - interval '85 days'`;
    const failed = `(v.account_id = ${accountIdSql(String(BIG))} AND ${outage}) OR hashtext(s.event_id::text) % 500 = 0`;
    await inParallel(
      databaseUrl,
      chunks('v.created_at').map((where) => eventsInsert(where, failed)),
    );
    progress('attempts');
    await inParallel(databaseUrl, chunks('e.created_at').map(attemptsInsert));
  });
}
