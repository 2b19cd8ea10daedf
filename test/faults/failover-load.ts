import type { Client } from 'pg';
import { ApiClient, sleep } from './harness';

interface Counts {
  ok: number;
  unavailable: number;
  unknown: number;
  hiddenCommits: number;
  internalErrors: number;
  staleReads: number;
}

type Answer = { status: number; body: Record<string, unknown> };

const detailsOf = (answer: Answer): unknown => (answer.body.error as { details?: unknown } | undefined)?.details;
const isCommitUnknown = (answer: Answer): boolean =>
  JSON.stringify(detailsOf(answer)) === JSON.stringify([{ field: 'commit', issue: 'unknown' }]);

/**
 * Write lanes as careful clients run them: create a verification, move it pending → processing →
 * approved with expected_version, and read it with min_version after each acknowledged change.
 * A 503 is retried as it was; a retry that finds its own change already made (409
 * version_conflict) is a 503 that hid a commit — unless that 503 said `commit` `unknown`.
 */
export class FailoverLoad {
  private readonly counts: Counts = {
    ok: 0,
    unavailable: 0,
    unknown: 0,
    hiddenCommits: 0,
    internalErrors: 0,
    staleReads: 0,
  };
  private readonly acknowledged = new Map<string, number>();
  private readonly writeTimes: number[] = [];
  private readonly refusalTimes: number[] = [];
  private readonly problems: string[] = [];
  /** The latest 503s (time, body) and requests that got no answer at all, for a round that fails to say why. */
  private readonly lastRefusals: string[] = [];
  private unanswered = 0;
  private lastUnanswered = '';
  private running = false;
  private lane = 0;

  constructor(
    private readonly clients: ApiClient[],
    private readonly accounts: { id: string; secret: string }[],
  ) {}

  start(lanes: number): Promise<void[]> {
    this.running = true;
    return Promise.all(Array.from({ length: lanes }, (_, i) => this.runLane(i % this.clients.length)));
  }

  async stop(running: Promise<void[]>): Promise<void> {
    this.running = false;
    await running;
  }

  snapshot(): Counts {
    return { ...this.counts };
  }

  /** Acknowledged writes since the last 503 after `at`: the service is writing again. */
  writesSinceLastRefusal(at: number): number {
    const lastRefusal = Math.max(at, ...this.refusalTimes.filter((t) => t > at));
    return this.writeTimes.filter((t) => t > lastRefusal).length;
  }

  /** From `at` to the first acknowledged write after the last 503 (0 when no 503 followed `at`). */
  outageAfter(at: number): number {
    const lastRefusal = Math.max(at, ...this.refusalTimes.filter((t) => t > at));
    if (lastRefusal === at) return 0;
    return Math.min(...this.writeTimes.filter((t) => t > lastRefusal)) - at;
  }

  /** What the load saw since `at`, for the message of a round that timed out. */
  describe(at: number): string {
    const since = (times: number[]) => times.filter((t) => t > at).length;
    const last = Math.max(at, ...this.refusalTimes.filter((t) => t > at));
    return [
      `acknowledged writes since the fault: ${since(this.writeTimes)}, after the last 503: ${this.writesSinceLastRefusal(at)}`,
      `503s since the fault: ${since(this.refusalTimes)}, the last ${last === at ? 'none' : `${last - at} ms after it`}`,
      `requests with no answer in the whole run: ${this.unanswered}${this.lastUnanswered ? ` (last: ${this.lastUnanswered})` : ''}`,
      'latest 503s:',
      ...this.lastRefusals.map((line) => `  ${line}`),
    ].join('\n');
  }

  findings(): string[] {
    return [...this.problems];
  }

  /** Acknowledged changes the database does not hold (a version below the one answered). */
  async missingAcknowledged(client: Client): Promise<string[]> {
    const ids = [...this.acknowledged.keys()];
    const { rows } = await client.query<{ id: string; version: number }>(
      'SELECT id, version FROM verifications WHERE id = ANY($1::uuid[])',
      [ids],
    );
    const held = new Map(rows.map((row) => [row.id, row.version]));
    return ids.filter((id) => (held.get(id) ?? 0) < (this.acknowledged.get(id) as number));
  }

  private async runLane(index: number): Promise<void> {
    const client = this.clients[index];
    const account = this.accounts[index];
    const internal = process.env.INTERNAL_API_TOKEN as string;
    while (this.running) {
      this.lane += 1;
      const created = await this.write(() =>
        client.call('POST', '/api/v1/internal/kyc/verifications', internal, {
          account_id: account.id,
          external_user_id: `lane-${this.lane}`,
        }),
      );
      if (!created || created.status !== 201) continue;
      const id = String(created.body.id);
      let version = 1;
      this.acknowledge(id, version);
      for (const status of ['processing', 'approved']) {
        const moved = await this.write(() =>
          client.call('POST', `/api/v1/internal/kyc/verifications/${id}/transitions`, internal, {
            status,
            expected_version: version,
          }),
        );
        if (!moved || moved.status !== 200) break;
        version = Number(moved.body.version);
        this.acknowledge(id, version);
        await this.readAtLeast(client, account.secret, id, version);
      }
    }
  }

  private acknowledge(id: string, version: number): void {
    this.acknowledged.set(id, version);
    this.writeTimes.push(Date.now());
    this.counts.ok += 1;
  }

  /** A write, retried on 503 as it was until it is answered otherwise (or the run ends). */
  private async write(send: () => Promise<Answer>): Promise<Answer | undefined> {
    let previous: Answer | undefined;
    for (let tries = 0; tries < 120; tries += 1) {
      const answer = await send().catch((error: Error) => {
        this.unanswered += 1;
        this.lastUnanswered = `${new Date().toISOString()} ${error.message}`;
        return undefined;
      });
      if (!answer) return undefined;
      if (answer.status >= 500 && answer.status !== 503) {
        this.counts.internalErrors += 1;
        this.problems.push(`HTTP ${answer.status}: ${JSON.stringify(answer.body)}`);
        return answer;
      }
      if (answer.status === 503) {
        this.counts.unavailable += 1;
        this.refusalTimes.push(Date.now());
        this.lastRefusals.push(`${new Date().toISOString()} ${JSON.stringify(answer.body)}`);
        if (this.lastRefusals.length > 5) this.lastRefusals.shift();
        if (isCommitUnknown(answer)) this.counts.unknown += 1;
        previous = answer;
        if (!this.running && tries > 20) return undefined;
        await sleep(250);
        continue;
      }
      const code = (answer.body.error as { code?: string } | undefined)?.code;
      if (previous && !isCommitUnknown(previous) && code === 'version_conflict') {
        this.counts.hiddenCommits += 1;
        this.problems.push(`a 503 hid a commit: ${JSON.stringify(previous.body)}`);
      }
      return answer;
    }
    return undefined;
  }

  private async readAtLeast(client: ApiClient, secret: string, id: string, version: number): Promise<void> {
    const read = await client
      .call('GET', `/api/v1/public/kyc/verifications/${id}?min_version=${version}`, secret)
      .catch(() => undefined);
    if (!read) return;
    if (read.status === 200 && Number(read.body.version) < version) {
      this.counts.staleReads += 1;
      this.problems.push(`min_version=${version} answered version ${String(read.body.version)}`);
    }
    if (read.status >= 500 && read.status !== 503) {
      this.counts.internalErrors += 1;
      this.problems.push(`read HTTP ${read.status}: ${JSON.stringify(read.body)}`);
    }
  }
}
