interface Call<In, Out> {
  input: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

/**
 * Groups calls made in the same turn of the event loop into one batch call, with no added wait:
 * everything submitted before the loop's next check phase (setImmediate) goes out together. Under
 * load many deliveries reach the same step in one turn, so one database statement or one Redis
 * script serves them all; alone, a call still leaves at once.
 *
 * `run` gets the inputs in submission order and must return one output per input, in that order.
 * If it throws, every call of that batch gets the error, unless `isolateFailures` is set: then each
 * input of a failed batch of several is run again on its own, so that one bad input (or one that
 * meets a deadlock) fails only its own call.
 */
export class MicroBatcher<In, Out> {
  private pending: Call<In, Out>[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly maxBatch = 100,
    private readonly isolateFailures = false,
  ) {
    if (!Number.isInteger(maxBatch) || maxBatch < 1) throw new RangeError('maxBatch must be a positive integer');
  }

  submit(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  private flush(): void {
    const batch = this.pending.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    if (!this.isolateFailures || batch.length === 1) return this.send(batch);
    // A failed batch's error is superseded by each input's own outcome.
    this.send(batch, () => {
      for (const call of batch) this.send([call]);
    });
  }

  private send(batch: Call<In, Out>[], onFailure?: (error: unknown) => void): void {
    let outputs: Promise<Out[]>;
    try {
      outputs = this.run(batch.map((call) => call.input));
    } catch (error) {
      outputs = Promise.reject(error);
    }
    outputs.then(
      (values) => {
        if (!Array.isArray(values) || values.length !== batch.length) {
          const error = new Error(`batch returned ${Array.isArray(values) ? values.length : 'no'} results for ${batch.length} inputs`);
          for (const call of batch) call.reject(error);
          return;
        }
        batch.forEach((call, i) => call.resolve(values[i] as Out));
      },
      (error: unknown) => {
        if (onFailure) return onFailure(error);
        for (const call of batch) call.reject(error);
      },
    );
  }
}
