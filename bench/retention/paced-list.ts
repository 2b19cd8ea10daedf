import http from 'node:http';

/** What the responses of one condition add up to. */
export class LatencyTally {
  readonly latencies: number[] = [];
  failures = 0;
  /** Requests sent into this tally and not answered yet. */
  pending = 0;

  add(ms: number, ok: boolean): void {
    this.latencies.push(ms);
    if (!ok) this.failures++;
  }

  /** Resolves once every request sent into this tally has been answered (30 s at most). */
  async settled(): Promise<void> {
    const deadline = Date.now() + 30_000;
    while (this.pending > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  /** Nearest-rank percentile in ms (0 when empty). */
  percentile(q: number): number {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  }
}

export interface ListRequest {
  path: string;
  secret: string;
}

/**
 * The list load: GET requests at a fixed rate, open loop (request i leaves at start + i/rate
 * whether or not earlier ones have answered, so a slow moment of the service shows in the latencies
 * instead of slowing the load down), on keep-alive connections. Each response is counted into the
 * tally that `tallyAt` names at the moment its request left (none: not counted), so the load runs
 * without a break through slices and the transitions between them.
 */
export class PacedList {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private running = false;
  private done?: Promise<void>;
  /** The worst delay, in ms, between a request's due time and its sending. */
  maxLagMs = 0;
  sent = 0;
  errors = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly requests: ListRequest[],
    private readonly rate: number,
    private readonly tallyAt: () => LatencyTally | undefined,
  ) {}

  start(): void {
    this.running = true;
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
    this.agent.destroy();
  }

  private async loop(): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    const start = performance.now();
    for (let i = 0; this.running; i++) {
      const due = start + (i * 1000) / this.rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
      this.maxLagMs = Math.max(this.maxLagMs, performance.now() - due);
      const request = this.requests[i % this.requests.length] as ListRequest;
      const pending: Promise<void> = this.send(request, this.tallyAt()).finally(() => inFlight.delete(pending));
      inFlight.add(pending);
      this.sent++;
    }
    await Promise.all(inFlight);
  }

  private send(request: ListRequest, tally: LatencyTally | undefined): Promise<void> {
    if (tally) tally.pending++;
    return new Promise<void>((resolve) => {
      const sentAt = performance.now();
      const req = http.request(`${this.baseUrl}${request.path}`, {
        agent: this.agent,
        headers: { authorization: `Bearer ${request.secret}` },
      });
      req.setTimeout(30_000, () => req.destroy(new Error('timed out')));
      req.on('error', () => {
        this.errors++;
        tally?.add(performance.now() - sentAt, false);
        resolve();
      });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          tally?.add(performance.now() - sentAt, status >= 200 && status < 300);
          resolve();
        });
      });
      req.end();
    }).finally(() => {
      if (tally) tally.pending--;
    });
  }
}
