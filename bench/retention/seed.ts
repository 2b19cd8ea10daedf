import { inParallel, insertVerifications, seedBenchDatabase, verificationRows } from '../harness/seed';
import { attemptsInsert, eventsInsert } from '../harness/seed-events';
import { fmt } from '../harness/report';
import { FLOOR_POOL, SERVICE_POOL, type AgeWindow } from './floor';

/**
 * `total` verifications of a pool, numbered from `first`, created inside its age window (less 2 h,
 * so the decision, within 70 minutes, stays inside too), oldest first, so heap and ids are in time
 * order as a live table's are; all decided, a quarter rejected.
 */
function agedRows(window: AgeWindow, first: number, total: number, accounts: number, now: string): string {
  const slotMs = Math.floor(((window.maxDays - window.minDays) * 86_400_000 - 7_200_000) / total);
  return verificationRows(first, first + total - 1, {
    created: `${now}::timestamptz - interval '${window.maxDays} days'
      + ((n::bigint - ${first}) * ${slotMs} + h6 % ${slotMs}) * interval '1 millisecond'`,
    account: `h1 % ${accounts}`,
    status: `CASE WHEN h2 % 4 = 0 THEN 'rejected' ELSE 'approved' END`,
  });
}

/** Recent verifications (created in the last day, never aged), one a second: what the list's first pages show. */
function recentRows(first: number, total: number, accounts: number, now: string): string {
  return verificationRows(first, first + total - 1, {
    created: `${now}::timestamptz - interval '1 day' + (n - ${first}) * interval '1 second'`,
    account: `n % ${accounts}`,
    status: `'approved'`,
  });
}

/**
 * Seeds the freshly migrated database: `accounts` accounts without a webhook URL; `aged`
 * verifications in each of the service's and the floor's aged pools, 3 events each; `recent`
 * verifications per account for the list's first pages. Returns the seconds it took.
 */
export async function seed(databaseUrl: string, accounts: number, aged: number, recent: number) {
  const now = `'${new Date().toISOString()}'`;
  const tables = ['verifications', 'webhook_events', 'webhook_attempts'];
  const shape = { accounts, createdAt: `${now}::timestamptz - interval '400 days'`, tables };
  return seedBenchDatabase(databaseUrl, shape, async (client, progress) => {
    progress(`${fmt(2 * aged)} aged verifications, ${fmt(accounts * recent)} recent ones`);
    await insertVerifications(databaseUrl, [
      agedRows(SERVICE_POOL, 1, aged, accounts, now),
      agedRows(FLOOR_POOL, aged + 1, aged, accounts, now),
      recentRows(2 * aged + 1, accounts * recent, accounts, now),
    ]);
    progress('events, 3 per aged verification');
    // One statement per pool, in parallel.
    const agedBetween = (window: AgeWindow): string =>
      `v.decided_at >= ${now}::timestamptz - interval '${window.maxDays + 1} days' AND v.decided_at < ${now}::timestamptz - interval '${window.minDays} days'`;
    await inParallel(databaseUrl, [eventsInsert(agedBetween(SERVICE_POOL)), eventsInsert(agedBetween(FLOOR_POOL))]);
    await client.query(attemptsInsert());
  });
}
