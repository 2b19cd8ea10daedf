import {
  BudgetClock,
  MAX_REST_MS,
  MAX_STANDBY_LAG_MS,
  MAX_STANDBY_WAIT_MS,
  MaintenanceBudget,
} from 'src/retention/maintenance-budget';

/** A clock that only moves when the budget sleeps or a batch "works". */
class FakeClock implements BudgetClock {
  at = 0;
  slept: number[] = [];
  now(): number {
    return this.at;
  }
  async sleep(ms: number): Promise<void> {
    this.slept.push(ms);
    this.at += ms;
  }
  work(ms: number): () => Promise<number> {
    return async () => {
      this.at += ms;
      return 1;
    };
  }
}

const noStandby = async (): Promise<number> => 0;

describe('MaintenanceBudget', () => {
  it('runs the first batch at once, then rests so that work takes its share of the time', async () => {
    const clock = new FakeClock();
    const budget = new MaintenanceBudget(25, noStandby, () => true, undefined, clock);
    await budget.batch(clock.work(100));
    expect(clock.slept).toEqual([]);
    await budget.batch(clock.work(40));
    // 100 ms of work at 25 %: 300 ms of rest, in steps of at most 250 ms.
    expect(clock.slept).toEqual([250, 50]);
    await budget.batch(clock.work(10));
    expect(clock.slept.slice(2)).toEqual([120]);
    // 150 ms of work in 570 ms, the last batch's rest (30 ms) still owed.
    expect(clock.at).toBe(570);
  });

  it('at 100 % never rests', async () => {
    const clock = new FakeClock();
    const budget = new MaintenanceBudget(100, noStandby, () => true, undefined, clock);
    for (let i = 0; i < 3; i++) await budget.batch(clock.work(500));
    expect(clock.slept).toEqual([]);
  });

  it('the rest follows what each batch cost: a slower batch earns a longer rest', async () => {
    const clock = new FakeClock();
    const budget = new MaintenanceBudget(50, noStandby, () => true, undefined, clock);
    await budget.batch(clock.work(20));
    await budget.batch(clock.work(200));
    await budget.batch(clock.work(20));
    expect(clock.slept).toEqual([20, 200]);
  });

  it('waits while a standby is more than MAX_STANDBY_LAG_MS behind, and counts the wait', async () => {
    const clock = new FakeClock();
    const lags = [MAX_STANDBY_LAG_MS + 5_000, MAX_STANDBY_LAG_MS + 1, MAX_STANDBY_LAG_MS, 0];
    const lag = async (): Promise<number> => lags.shift() ?? 0;
    const budget = new MaintenanceBudget(100, lag, () => true, undefined, clock);
    expect(await budget.batch(clock.work(10))).toBe(1);
    expect(clock.slept).toEqual([250, 250]);
    expect(budget.standbyWaitMs).toBe(500);
    expect(lags).toEqual([0]);
  });

  it('a stop asked for during a rest ends it at the next step, without running the batch', async () => {
    const clock = new FakeClock();
    let going = true;
    const budget = new MaintenanceBudget(10, noStandby, () => going, undefined, clock);
    await budget.batch(clock.work(100));
    const sleep = clock.sleep.bind(clock);
    clock.sleep = async (ms) => {
      await sleep(ms);
      going = false;
    };
    let ran = false;
    const result = await budget.batch(async () => (ran = true));
    expect({ result, ran, slept: clock.slept }).toEqual({ result: undefined, ran: false, slept: [250] });
  });

  it('a stop while waiting for a standby ends the wait', async () => {
    const clock = new FakeClock();
    let calls = 0;
    const behind = async (): Promise<number> => (++calls > 3 ? 0 : MAX_STANDBY_LAG_MS * 10);
    const budget = new MaintenanceBudget(100, behind, () => calls < 2, undefined, clock);
    expect(await budget.batch(clock.work(10))).toBeUndefined();
    expect(calls).toBe(2);
  });

  it('rests at most MAX_REST_MS after a batch that took long (a lock wait), whatever the share', async () => {
    const clock = new FakeClock();
    const budget = new MaintenanceBudget(10, noStandby, () => true, undefined, clock);
    await budget.batch(clock.work(60_000));
    const before = clock.at;
    await budget.batch(clock.work(10));
    expect(clock.at - before - 10).toBe(MAX_REST_MS);
  });

  it('waits for a standby that stays behind for MAX_STANDBY_WAIT_MS at most, says so, and runs the batch', async () => {
    const clock = new FakeClock();
    const told: number[] = [];
    const always = async (): Promise<number> => MAX_STANDBY_LAG_MS * 60;
    const budget = new MaintenanceBudget(
      100,
      always,
      () => true,
      (ms) => told.push(ms),
      clock,
    );
    expect(await budget.batch(clock.work(10))).toBe(1);
    expect({ told, waited: budget.standbyWaitMs }).toEqual({
      told: [MAX_STANDBY_WAIT_MS],
      waited: MAX_STANDBY_WAIT_MS,
    });
  });
});
