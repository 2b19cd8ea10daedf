import { BusyRetry } from 'src/webhooks/endpoint/busy-retry';

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
};

describe('BusyRetry', () => {
  it('tries again only the accounts still passed over, until none is', async () => {
    const tries: string[][] = [];
    const busyAt = [['b'], []];
    const retry = new BusyRetry(async (ids) => (tries.push(ids), busyAt[tries.length - 1] ?? []), fail, [1, 1, 1]);
    retry.schedule(['a', 'b']);
    await until(() => retry.size === 0);
    expect(tries).toEqual([['a', 'b'], ['b']]);
  });

  it('gives up once the pauses run out', async () => {
    const tries: string[][] = [];
    const retry = new BusyRetry(async (ids) => (tries.push(ids), ids), fail, [1, 1]);
    retry.schedule(['a']);
    await until(() => retry.size === 0);
    expect(tries).toEqual([['a'], ['a']]);
  });

  it('keeps a retry going past its pauses while the account is passed over again', async () => {
    const tries: string[][] = [];
    const retry: BusyRetry = new BusyRetry(
      async (ids) => {
        tries.push(ids);
        // Passed over again as the last pause's try runs (an attempt of the account ended meanwhile).
        if (tries.length === 2) retry.schedule(['a']);
        return ids;
      },
      fail,
      [5, 5],
    );
    retry.schedule(['a']);
    await until(() => retry.size === 0);
    expect(tries.length).toBeGreaterThan(2);
  });

  it('leaves an account with a retry pending to it, and schedules nothing for none', async () => {
    const tries: string[][] = [];
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const retry = new BusyRetry(async (ids) => (tries.push(ids), await gate, []), fail, [1]);
    retry.schedule(['a', 'a']);
    retry.schedule(['a', 'b']);
    retry.schedule([]);
    expect(retry.size).toBe(2);
    release();
    await until(() => retry.size === 0);
    expect(tries.sort()).toEqual([['a'], ['b']]);
  });

  it('hands a failed try to `failed` and forgets the accounts', async () => {
    const errors: unknown[] = [];
    const retry = new BusyRetry(
      async () => {
        throw new Error('connection lost');
      },
      (error) => errors.push(error),
      [1],
    );
    retry.schedule(['a']);
    await until(() => retry.size === 0);
    expect(errors.map((error) => (error as Error).message)).toEqual(['connection lost']);
  });
});

function fail(error: unknown): void {
  throw error;
}
