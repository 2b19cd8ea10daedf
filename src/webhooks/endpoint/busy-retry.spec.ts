import { BusyRetry } from 'src/webhooks/endpoint/busy-retry';

const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 1));
};

/** A BusyRetry over `promote`, with the tries it made. */
function retrying(promote: (ids: string[], tries: string[][], retry: BusyRetry) => string[], pauses = [5, 5, 5]) {
  const tries: string[][] = [];
  const retry: BusyRetry = new BusyRetry(async (ids) => promote(ids, tries, retry), fail, pauses);
  return { retry, tries };
}

describe('BusyRetry', () => {
  it('tries again only the accounts still passed over, until none is', async () => {
    const busyAt = [['b'], []];
    const { retry, tries } = retrying((ids, tries) => (tries.push(ids), busyAt[tries.length - 1] ?? []));
    retry.schedule(['a', 'b']);
    await until(() => retry.size === 0);
    expect(tries).toEqual([['a', 'b'], ['b']]);
  });

  it('gives up once the pauses run out', async () => {
    const { retry, tries } = retrying((ids, tries) => (tries.push(ids), ids), [5, 5]);
    retry.schedule(['a']);
    await until(() => retry.size === 0);
    expect(tries).toEqual([['a'], ['a']]);
  });

  it('tries once more an account passed over while a try of it ran, even one that try let through', async () => {
    const { retry, tries } = retrying((ids, tries, self) => {
      tries.push(ids);
      // An attempt of the account ended while this try held its lock: this try could not see it.
      if (tries.length === 1) self.schedule(['a']);
      return [];
    });
    retry.schedule(['a']);
    await until(() => retry.size === 0);
    expect(tries).toEqual([['a'], ['a']]);
  });

  it('goes on past its pauses while the account is passed over again during each try', async () => {
    const { retry, tries } = retrying(
      (ids, tries, self) => {
        tries.push(ids);
        if (tries.length <= 3) self.schedule(['a']);
        return ids;
      },
      [1],
    );
    retry.schedule(['a']);
    await until(() => retry.size === 0);
    expect(tries).toHaveLength(4);
  });

  it('lets an account go as soon as it is through, so a new pass-over starts a retry of it', async () => {
    const { retry, tries } = retrying((ids, tries, self) => {
      tries.push(ids);
      // 'a' went through on the first try; passed over again later, it gets a retry of its own.
      if (tries.length === 2) self.schedule(['a']);
      return ids.filter((id) => id === 'b');
    });
    retry.schedule(['a', 'b']);
    await until(() => retry.size === 0);
    expect(tries.slice(0, 2)).toEqual([['a', 'b'], ['b']]);
    // Kept until its run ended, it would have been left to that run, and tried once.
    expect(tries.filter((ids) => ids.includes('a')).length).toBeGreaterThanOrEqual(2);
  });

  it('leaves an account with a retry running to it, and schedules nothing for none', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const tries: string[][] = [];
    const retry = new BusyRetry(async (ids) => (tries.push(ids), await gate, []), fail, [1]);
    retry.schedule(['a', 'a']);
    retry.schedule(['a', 'b']);
    retry.schedule([]);
    await until(() => tries.length === 2);
    expect(retry.size).toBe(2);
    release();
    await until(() => retry.size === 0);
    expect(tries.length).toBeGreaterThanOrEqual(2);
    expect(tries.slice(0, 2).sort()).toEqual([['a'], ['b']]);
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

  it('tries nothing once stopped', async () => {
    const { retry, tries } = retrying((ids, tries) => (tries.push(ids), ids), [5, 5]);
    retry.schedule(['a']);
    retry.stop();
    retry.schedule(['b']);
    await until(() => retry.size === 0);
    expect(tries).toEqual([]);
  });
});

function fail(error: unknown): void {
  throw error;
}
