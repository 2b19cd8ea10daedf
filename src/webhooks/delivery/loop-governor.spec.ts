import {
  BUSY_LAG_MS,
  FIRST_CAP,
  GovernorClock,
  LoopGovernor,
  MAX_HOLD_MS,
  TICK_MS,
  WORKER_BUSY_LAG_MS,
} from 'src/webhooks/delivery/loop-governor';
import { FRESH_PRIORITY } from 'src/webhooks/queue/delivery-job';

/** A clock whose ticks the test fires, each `late` ms after it was due. */
class FakeClock implements GovernorClock {
  at = 0;
  private tickFn?: () => void;
  now(): number {
    return this.at;
  }
  every(_ms: number, tick: () => void): () => void {
    this.tickFn = tick;
    return () => (this.tickFn = undefined);
  }
  get ticking(): boolean {
    return this.tickFn !== undefined;
  }
  async tick(late = 0): Promise<void> {
    this.at += TICK_MS + late;
    this.tickFn?.();
    await flush();
  }
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 10; i += 1) await Promise.resolve();
};

/** A delivery that runs until the test ends it. */
function delivery(): { work: () => Promise<string>; end: () => void; started: boolean } {
  let end: () => void = () => undefined;
  const d = {
    started: false,
    end: () => end(),
    work: () => {
      d.started = true;
      return new Promise<string>((resolve) => (end = () => resolve('done')));
    },
  };
  return d;
}

describe('LoopGovernor', () => {
  it('starts the first deliveries at once, then holds the rest until a tick finds room', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    const all = Array.from({ length: FIRST_CAP + 3 }, () => delivery());
    const results = all.map((d) => governor.run(d.work));
    await flush();
    expect(all.map((d) => d.started)).toEqual([true, true, false, false, false]);
    expect(governor.state).toEqual({ cap: FIRST_CAP, running: FIRST_CAP, waiting: 3 });
    // On time with the cap in use: the cap grows by one a tick, and one more starts.
    await clock.tick();
    expect(governor.state).toEqual({ cap: FIRST_CAP + 1, running: FIRST_CAP + 1, waiting: 2 });
    all.forEach((d) => d.end());
    await clock.tick();
    await clock.tick();
    for (const d of all) d.end();
    await expect(Promise.all(results)).resolves.toEqual(all.map(() => 'done'));
  });

  it('halves the cap when the loop is late, and starts nothing more while it is full', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    const all = Array.from({ length: 20 }, () => delivery());
    all.forEach((d) => void governor.run(d.work));
    await flush();
    for (let i = 0; i < 6; i += 1) await clock.tick();
    expect(governor.state.cap).toBe(FIRST_CAP + 6);
    expect(governor.state.running).toBe(FIRST_CAP + 6);
    await clock.tick(BUSY_LAG_MS + 1);
    expect(governor.state.cap).toBe((FIRST_CAP + 6) / 2);
    // Over the cap now: those in flight go on, and none starts until enough of them end (the cap
    // grows by one a tick on time meanwhile).
    expect(governor.state.running).toBe(FIRST_CAP + 6);
    await clock.tick();
    expect(governor.state).toEqual({ cap: (FIRST_CAP + 6) / 2 + 1, running: FIRST_CAP + 6, waiting: 12 });
    all.slice(0, 5).forEach((d) => d.end());
    await flush();
    await clock.tick();
    expect(governor.state).toEqual({ cap: (FIRST_CAP + 6) / 2 + 1, running: (FIRST_CAP + 6) / 2 + 1, waiting: 10 });
    // The cap never goes below where it started, however late the loop.
    for (let i = 0; i < 5; i += 1) await clock.tick(100);
    expect(governor.state.cap).toBe(FIRST_CAP);
  });

  it("takes a worker process's threshold: a tick late by less than WORKER_BUSY_LAG_MS leaves the cap growing", async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock, WORKER_BUSY_LAG_MS);
    Array.from({ length: 20 }, () => delivery()).forEach((d) => void governor.run(d.work));
    await flush();
    await clock.tick();
    expect(governor.state.cap).toBe(FIRST_CAP + 1);
    await clock.tick((BUSY_LAG_MS + WORKER_BUSY_LAG_MS) / 2);
    expect(governor.state.cap).toBe(FIRST_CAP + 2);
    await clock.tick(WORKER_BUSY_LAG_MS + 1);
    expect(governor.state.cap).toBe(FIRST_CAP);
  });

  it('never raises the cap above its maximum', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(4, clock);
    Array.from({ length: 10 }, () => delivery()).forEach((d) => void governor.run(d.work));
    await flush();
    for (let i = 0; i < 10; i += 1) await clock.tick();
    expect(governor.state).toEqual({ cap: 4, running: 4, waiting: 6 });
  });

  it('starts a delivery held MAX_HOLD_MS however busy the loop, oldest first', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    const all = Array.from({ length: FIRST_CAP + 2 }, () => delivery());
    all.forEach((d) => void governor.run(d.work));
    await flush();
    const late = BUSY_LAG_MS + 5;
    for (let waited = 0; waited + TICK_MS + late < MAX_HOLD_MS; waited += TICK_MS + late) await clock.tick(late);
    expect(all.map((d) => d.started)).toEqual([true, true, false, false]);
    await clock.tick(late);
    expect(all.map((d) => d.started)).toEqual([true, true, true, true]);
  });

  it('stops ticking once nothing runs or waits, and starts again with the next delivery', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    const d = delivery();
    const result = governor.run(d.work);
    await flush();
    expect(clock.ticking).toBe(true);
    d.end();
    await expect(result).resolves.toBe('done');
    await clock.tick();
    expect(clock.ticking).toBe(false);
    const next = delivery();
    void governor.run(next.work);
    await flush();
    expect(next.started).toBe(true);
    expect(clock.ticking).toBe(true);
  });

  it('passes a delivery failure on, and frees its place', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    await expect(governor.run(() => Promise.reject(new Error('endpoint down')))).rejects.toThrow('endpoint down');
    expect(governor.state.running).toBe(0);
  });

  it("lets a fresh job's delivery start at once, and holds a maintenance job's with the rest", async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    const maintenance = Array.from({ length: FIRST_CAP + 1 }, () => delivery());
    maintenance.forEach((d) => void governor.deliver({}, d.work));
    const fresh = delivery();
    void governor.deliver({ priority: FRESH_PRIORITY }, fresh.work);
    await flush();
    expect(maintenance.map((d) => d.started)).toEqual([true, true, false]);
    expect(fresh.started).toBe(true);
    // A fresh delivery is not the governor's: it neither counts against the cap nor waits for it.
    expect(governor.state).toEqual({ cap: FIRST_CAP, running: FIRST_CAP, waiting: 1 });
  });

  it('counts a delivery as running from the tick that lets it start, so none passes the cap meanwhile', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    const all = Array.from({ length: FIRST_CAP + 1 }, () => delivery());
    all.forEach((d) => void governor.run(d.work));
    await flush();
    all[0].end();
    await flush();
    // The tick lets the held one start; a delivery asked for before it resumes must not start too.
    const ticked = clock.tick();
    const next = delivery();
    void governor.run(next.work);
    await ticked;
    expect(all[FIRST_CAP].started).toBe(true);
    expect(next.started).toBe(false);
    expect(governor.state).toEqual({ cap: FIRST_CAP, running: FIRST_CAP, waiting: 1 });
  });

  it('starts every held delivery, and every later one, once the worker stops', async () => {
    const clock = new FakeClock();
    const governor = new LoopGovernor(50, clock);
    const all = Array.from({ length: FIRST_CAP + 3 }, () => delivery());
    all.forEach((d) => void governor.run(d.work));
    await flush();
    governor.releaseAll();
    const later = delivery();
    void governor.run(later.work);
    await flush();
    expect([...all, later].every((d) => d.started)).toBe(true);
    expect(governor.state).toEqual({ cap: FIRST_CAP, running: FIRST_CAP + 4, waiting: 0 });
  });
});
