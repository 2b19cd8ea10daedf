import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { pacedChanges, pacedLoad } from '../harness/loads';
import { fmt, log } from '../harness/report';
import { benchSecret } from '../harness/service-env';
import { Measured, Tally } from '../harness/slices';
import { freshArrivals, sliceLoads } from './passes';
import { insertBacklog } from './phases';
import { MEDIUM } from './seed';
import type { Side } from './sides';

export type DrainReadFigures = {
  list: Record<'drain' | 'none', Measured>;
  fresh: Record<'drain' | 'none', number[]>;
  /**
   * The bench's own event-loop delay in ms over each kind's slices, the worst slice's p99 and the max
   * (sampled by a 5 ms timer: about 5 is no delay), so that a read's figure can be told from a stall
   * of the loop that times it.
   */
  benchLoop: Record<'drain' | 'none', { p99: number; max: number }>;
  /** Drain slices whose backlog was still arriving when the slice ended (else the slice saw part of a drain). */
  outlasted: number;
  backlog: number;
};

/**
 * Another client's list (a medium account's first page, open loop at `rate`/s) and fresh status
 * changes of the hooked accounts (`during`/s) while a Redis outage's backlog drains, against the same
 * with nothing pending: `slices` slices of `slice` s of each kind, taking turns. A drain slice inserts
 * a backlog of twice what the side delivered in a slice at its steady rate, so that the drain outlasts
 * the slice, and starts when the first of it arrives; the rest drains after the slice, unmeasured,
 * before the next one starts.
 */
export async function drainReads(side: Side, steady: number, o: DrainReadOptions): Promise<DrainReadFigures> {
  const other = { path: '/api/v1/public/kyc/verifications?limit=20', secret: benchSecret(MEDIUM.first) };
  const list = pacedLoad(side.api.url, [other], o.rate);
  const tallies = { drain: new Tally(), none: new Tally() };
  const fresh = { drain: [] as number[], none: [] as number[] };
  const loops = { drain: [] as LoopFigures[], none: [] as LoopFigures[] };
  const size = Math.max(1_000, Math.round(steady * o.slice * 2));
  let outlasted = 0;
  // A warm-up, not counted, as in the retention passes: the loads' own start is not a drain's cost.
  await Promise.all([
    list(o.warmup, new Tally()),
    pacedChanges(side.client, side.moving, o.during, o.during * o.warmup),
  ]);
  await side.receiver.collect(0, `${side.name} drain warm-up`);
  for (let round = 0; round < o.slices; round++) {
    for (const kind of round % 2 ? (['none', 'drain'] as const) : (['drain', 'none'] as const)) {
      const what = `${side.name} drain reads ${kind}`;
      const backlog = kind === 'drain' ? await insertBacklog(side, size) : 0;
      for (const deadline = Date.now() + 60_000; backlog > 0 && side.receiver.count === 0;) {
        if (Date.now() > deadline) throw new Error(`${what}: no event of the backlog arrived within 60 s`);
        await sleep(10);
      }
      const end = Date.now() + o.slice * 1000;
      // A monitor per slice: one enabled again after a pause counts the pause as a delay.
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      const loads = await sliceLoads(side, list, tallies[kind], o);
      loop.disable();
      loops[kind].push({ p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 });
      const arrived = await freshArrivals(side, loads, what);
      fresh[kind].push(...arrived.ms);
      if (backlog === 0) continue;
      const rest =
        arrived.others.length < backlog
          ? (await side.receiver.collect(backlog - arrived.others.length, `${what}, the rest of the backlog`)).arrivals
          : [];
      if ([...arrived.others, ...rest].some((a) => a.at > end)) outlasted++;
    }
    log(
      `${side.name} drain reads: round ${round + 1}; list p99 drain / none ${fmt(tallies.drain.measured().p99, 1)} / ${fmt(tallies.none.measured().p99, 1)} ms; the bench's own loop delay p99 ${fmt(loopFigures(loops.drain).p99, 1)} / ${fmt(loopFigures(loops.none).p99, 1)} ms`,
    );
  }
  return {
    list: { drain: tallies.drain.measured(), none: tallies.none.measured() },
    fresh,
    benchLoop: { drain: loopFigures(loops.drain), none: loopFigures(loops.none) },
    outlasted,
    backlog: size,
  };
}

type LoopFigures = { p99: number; max: number };
/** The slices' worst p99 and their max. */
const loopFigures = (slices: LoopFigures[]): LoopFigures => ({
  p99: Math.max(...slices.map((f) => f.p99)),
  max: Math.max(...slices.map((f) => f.max)),
});

export type DrainReadOptions = { rate: number; slice: number; slices: number; warmup: number; during: number };
