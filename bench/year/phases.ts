import { setTimeout as sleep } from 'node:timers/promises';
import { changeLoop } from '../harness/loads';
import { fmt, log } from '../harness/report';
import { onServer } from '../harness/db';
import { accountIdSql } from '../harness/seed';
import { Tally, median } from '../harness/slices';
import type { Arrival } from '../webhooks/receiver';
import type { Side } from './sides';

/** Deliveries/s from `t0` to the last arrival. */
const rateSince = (arrivals: Arrival[], t0: number): number =>
  arrivals.length / ((Math.max(...arrivals.map((a) => a.at)) - t0) / 1000);

/**
 * What the services cost PostgreSQL while nobody calls them: each database's `active_time` (time
 * its sessions spent running statements) and committed transactions over `seconds`, from
 * pg_stat_database, read on the server's maintenance database so the reading is not counted.
 * Sessions report these when a transaction ends or after 10 s idle: the window starts after 15 s
 * of quiet, so the load before it is reported before it.
 */
export async function idleCost(sides: Side[], seconds: number) {
  const read = () =>
    onServer(sides[0]?.databaseUrl ?? '', async (db) => {
      const names = sides.map((side) => decodeURIComponent(new URL(side.databaseUrl).pathname.slice(1)));
      const { rows } = await db.query<{ datname: string; active: number; commits: number }>(
        `SELECT datname, active_time AS active, xact_commit::float8 AS commits FROM pg_stat_database WHERE datname = ANY($1)`,
        [names],
      );
      return sides.map((_, i) => rows.find((row) => row.datname === names[i]) ?? { active: NaN, commits: NaN });
    });
  await sleep(15_000);
  const before = await read();
  await sleep(seconds * 1000);
  const after = await read();
  const perMinute = (value: number): number => (value / seconds) * 60;
  return sides.map((side, i) => ({
    name: side.name,
    msPerMinute: perMinute((after[i]?.active ?? NaN) - (before[i]?.active ?? NaN)),
    transactionsPerMinute: perMinute((after[i]?.commits ?? NaN) - (before[i]?.commits ?? NaN)),
  }));
}

export type Steady = Record<'changes' | 'deliveries' | 'keepUp', number>;

/**
 * Status changes of the hooked accounts' moving verifications, closed loop at `connections`, in
 * rounds of `seconds` per side, who goes first alternating; each round's deliveries/s to its last
 * arrival. Medians of the rounds, per side.
 */
export async function changeRounds(sides: Side[], o: { rounds: number; seconds: number; connections: number }) {
  const loops = sides.map((side) =>
    changeLoop(side.client, side.client, side.moving, Math.min(o.connections, side.moving.length)),
  );
  const rounds = sides.map(() => [] as Steady[]);
  let failures = 0;
  for (let r = -1; r < o.rounds; r++) {
    const order = sides.map((_, i) => i);
    for (const i of r % 2 ? order : order.reverse()) {
      const [side, loop] = [sides[i] as Side, loops[i] as ReturnType<typeof changeLoop>];
      const [from, t0, tally] = [loop.committed, Date.now(), new Tally()];
      await loop.run(o.seconds, tally);
      const changes = (loop.committed - from) / ((Date.now() - t0) / 1000);
      const { arrivals, missing } = await side.receiver.collect(loop.committed - from, `${side.name} changes`);
      if (r < 0) continue; // the warm-up round
      failures += tally.failures + missing;
      const deliveries = rateSince(arrivals, t0);
      rounds[i]?.push({ changes, deliveries, keepUp: arrivals.length / (loop.committed - from) });
    }
  }
  const steady = rounds.map((rs) => ({
    changes: median(rs.map((x) => x.changes)),
    deliveries: median(rs.map((x) => x.deliveries)),
    keepUp: median(rs.map((x) => x.keepUp)),
  }));
  return { steady, failures };
}

/**
 * A Redis outage's backlog: `total` pending events with no queue job over the hooked accounts
 * (the body a real one of theirs), inserted in one statement; the relay finds and drains them.
 * Deliveries/s from the first arrival to the last, per side, one side at a time.
 */
export async function drainBacklog(side: Side, total: number): Promise<{ rate: number; missing: number }> {
  const inserted = await insertBacklog(side, total);
  const { arrivals, missing } = await side.receiver.collect(inserted, `${side.name} backlog`);
  const times = arrivals.map((a) => a.at).sort((a, b) => a - b);
  const rate = arrivals.length / (((times[times.length - 1] ?? NaN) - (times[0] ?? NaN)) / 1000);
  log(`${side.name}: a backlog of ${fmt(inserted)} drained at ${fmt(rate)}/s`);
  return { rate, missing };
}

/** Inserts about `total` pending events without a queue job, spread evenly over the hooked accounts; returns how many. */
export async function insertBacklog(side: Side, total: number): Promise<number> {
  const perAccount = Math.ceil(total / side.hooked.length);
  const { rows } = await side.db.query<{ body: string }>(
    `SELECT body FROM webhook_events WHERE delivery_status = 'delivered' ORDER BY created_at DESC LIMIT 1`,
  );
  await side.db.query(
    `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, next_attempt_at)
     SELECT gen_random_uuid(), ${accountIdSql('i')}, gen_random_uuid(), 'verification.status_changed', $1,
            now() - interval '1 minute', 'pending', now() - interval '1 minute' + n * interval '1 microsecond'
       FROM generate_series(1, $2) AS n CROSS JOIN unnest($3::int[]) AS i`,
    [rows[0]?.body ?? '{}', perAccount, side.hooked],
  );
  return perAccount * side.hooked.length;
}
