interface Call<In, Out> {
  input: In;
  resolve: (value: Out) => void;
  reject: (error: unknown) => void;
}

export interface MicroBatcherOptions<In> {
  /** Most inputs in one call (100). */
  maxBatch?: number;
  /**
   * Each input of a failed batch of several is run again on its own, so that one bad input (or
   * one that meets a deadlock) fails only its own call.
   */
  isolateFailures?: boolean;
  /**
   * Inputs with the same key never share a batch: a later one waits for the next batch, in
   * submission order (for a statement that must not see one row twice).
   */
  keyOf?: (input: In) => string;
}

/**
 * Groups calls made in the same turn of the event loop into one batch call, with no added wait:
 * everything submitted before the loop's next check phase (setImmediate) goes out together. Under
 * load many deliveries reach the same step in one turn, so one database statement or one Redis
 * script serves them all; alone, a call still leaves at once.
 *
 * `run` gets the inputs in submission order and must return one output per input, in that order.
 * If it throws, every call of that batch gets the error (but see `isolateFailures`).
 */
export class MicroBatcher<In, Out> {
  private pending: Call<In, Out>[] = [];
  private scheduled = false;
  private readonly maxBatch: number;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly options: MicroBatcherOptions<In> = {},
  ) {
    this.maxBatch = options.maxBatch ?? 100;
    if (!Number.isInteger(this.maxBatch) || this.maxBatch < 1)
      throw new RangeError('maxBatch must be a positive integer');
  }

  submit(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.pending.push({ input, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    const batch = this.take();
    if (this.pending.length > 0) this.schedule();
    if (batch.length === 0) return;
    if (!this.options.isolateFailures || batch.length === 1) return this.send(batch);
    // A failed batch's error is superseded by each input's own outcome.
    this.send(batch, () => {
      for (const call of batch) this.send([call]);
    });
  }

  /** The next batch: up to maxBatch pending calls, none sharing a key with an earlier one. */
  private take(): Call<In, Out>[] {
    const { keyOf } = this.options;
    if (!keyOf) return this.pending.splice(0, this.maxBatch);
    const keys = new Set<string>();
    const batch: Call<In, Out>[] = [];
    const later: Call<In, Out>[] = [];
    for (const call of this.pending) {
      const key = keyOf(call.input);
      if (batch.length < this.maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(call);
      } else later.push(call);
    }
    this.pending = later;
    return batch;
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
          const error = new Error(
            `batch returned ${Array.isArray(values) ? values.length : 'no'} results for ${batch.length} inputs`,
          );
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
