import { MicroBatcher } from 'src/common/micro-batcher';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('MicroBatcher', () => {
  function recording(maxBatch?: number): { batcher: MicroBatcher<number, string>; batches: number[][] } {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, string>(
      async (inputs) => {
        batches.push(inputs);
        return inputs.map((n) => `out-${n}`);
      },
      { maxBatch },
    );
    return { batcher, batches };
  }

  it('sends the calls of one turn as one batch, in order, and gives each caller its own result', async () => {
    const { batcher, batches } = recording();
    const results = await Promise.all([1, 2, 3].map((n) => batcher.submit(n)));
    expect(batches).toEqual([[1, 2, 3]]);
    expect(results).toEqual(['out-1', 'out-2', 'out-3']);
  });

  it('sends a lone call on its own without waiting for company', async () => {
    const { batcher, batches } = recording();
    await expect(batcher.submit(7)).resolves.toBe('out-7');
    expect(batches).toEqual([[7]]);
  });

  it('starts a new batch for calls made in a later turn', async () => {
    const { batcher, batches } = recording();
    const first = batcher.submit(1);
    await nextTurn();
    const second = batcher.submit(2);
    await Promise.all([first, second]);
    expect(batches).toEqual([[1], [2]]);
  });

  it('never sends more than maxBatch inputs at once', async () => {
    const { batcher, batches } = recording(2);
    const results = await Promise.all([1, 2, 3, 4, 5].map((n) => batcher.submit(n)));
    expect(batches).toEqual([[1, 2], [3, 4], [5]]);
    expect(results).toEqual(['out-1', 'out-2', 'out-3', 'out-4', 'out-5']);
  });

  it('rejects every call of a failed batch and leaves the next batch unaffected', async () => {
    let fail = true;
    const batcher = new MicroBatcher<number, number>(async (inputs) => {
      if (fail) throw new Error('database down');
      return inputs;
    });
    const failed = [batcher.submit(1), batcher.submit(2)].map((p) =>
      p.then(
        () => 'resolved',
        (e: Error) => e.message,
      ),
    );
    expect(await Promise.all(failed)).toEqual(['database down', 'database down']);
    fail = false;
    await expect(batcher.submit(3)).resolves.toBe(3);
  });

  it('rejects the calls when run throws synchronously', async () => {
    const batcher = new MicroBatcher<number, number>(() => {
      throw new Error('bad statement');
    });
    await expect(batcher.submit(1)).rejects.toThrow('bad statement');
  });

  it('rejects the calls when run returns the wrong number of results, rather than mismatching them', async () => {
    const batcher = new MicroBatcher<number, number>(async (inputs) => inputs.slice(1));
    const calls = [batcher.submit(1), batcher.submit(2)];
    await expect(calls[0]).rejects.toThrow('batch returned 1 results for 2 inputs');
    await expect(calls[1]).rejects.toThrow('batch returned 1 results for 2 inputs');
  });

  it('rejects the calls, instead of leaving them waiting, when run resolves without an array', async () => {
    const batcher = new MicroBatcher<number, number>(async () => undefined as unknown as number[]);
    await expect(batcher.submit(1)).rejects.toThrow('batch returned no results for 1 inputs');
  });

  it('with isolateFailures, runs each input of a failed batch on its own, so only the bad one fails', async () => {
    const batches: number[][] = [];
    const batcher = new MicroBatcher<number, number>(
      async (inputs) => {
        batches.push(inputs);
        if (inputs.includes(2)) throw new Error('bad input 2');
        return inputs.map((n) => n * 10);
      },
      { isolateFailures: true },
    );
    const outcomes = await Promise.all([1, 2, 3].map((n) => batcher.submit(n).then(String, (e: Error) => e.message)));
    expect(outcomes).toEqual(['10', 'bad input 2', '30']);
    expect(batches).toEqual([[1, 2, 3], [1], [2], [3]]);
  });

  it('with isolateFailures, a lone failing call gets its error without a second run', async () => {
    let runs = 0;
    const batcher = new MicroBatcher<number, number>(
      async () => {
        runs++;
        throw new Error('database down');
      },
      { isolateFailures: true },
    );
    await expect(batcher.submit(1)).rejects.toThrow('database down');
    expect(runs).toBe(1);
  });

  it('with keyOf, never puts two inputs of one key in a batch: the later one goes in the next batch, in order', async () => {
    const batches: string[][] = [];
    const batcher = new MicroBatcher<string, string>(
      async (inputs) => {
        batches.push(inputs);
        return inputs;
      },
      { keyOf: (input) => input.split(':')[0] as string },
    );
    await Promise.all(['a:1', 'b:1', 'a:2', 'c:1', 'a:3'].map((input) => batcher.submit(input)));
    expect(batches).toEqual([['a:1', 'b:1', 'c:1'], ['a:2'], ['a:3']]);
  });

  it('refuses a batch size below one', () => {
    expect(() => new MicroBatcher<number, number>(async (inputs) => inputs, { maxBatch: 0 })).toThrow(RangeError);
  });
});
