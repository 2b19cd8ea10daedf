import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import type { Job, Queue } from 'bull';
import { withRedisCause } from 'src/redis/redis-errors';
import { EventAnnouncer } from 'src/webhooks/queue/event-announcer';
import { MicroBatcher } from 'src/common/micro-batcher';
import { type Lane, deliveryJob, deliveryJobId } from 'src/webhooks/queue/delivery-job';
import { type DeliveryJobSource } from 'src/webhooks/tables/event-rows';
import { DELIVERY_PRODUCER } from 'src/webhooks/queue/webhook-queue.constants';
import { closeDeliveryQueue } from 'src/webhooks/queue/webhook-queue.factory';

const SHUTDOWN_ENQUEUE_WAIT_MS = 3_000;
/** The most jobs one MULTI adds (see add). */
const ADD_CHUNK = 50;

/**
 * Hands committed outbox events to the delivery queue without making the caller wait: Redis being
 * slow or down only delays the webhook (the sweeper relays it), never the API response.
 */
@Injectable()
export class DeliveryQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryQueue.name);
  /** Enqueues not yet confirmed; shutdown lets them finish (each bounded by the command time-out). */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    @Inject(DELIVERY_PRODUCER) private readonly queue: Queue,
    private readonly announcer: EventAnnouncer,
  ) {}

  /** The jobs dispatched in one turn of the event loop go to Redis together (MicroBatcher). */
  private readonly batches = new MicroBatcher<{ job: DeliveryJobSource; lane: Lane }, void>(
    async (items) => {
      await this.add(items.map(({ job, lane }) => deliveryJob(job, lane)));
      return items.map(() => undefined);
    },
    { maxBatch: 500 },
  );

  /**
   * Queues one job per event cycle, named and labelled for the dashboard. Every event gets a job,
   * a dead one too (no webhook URL): the worker ends it as failed, so the Failed tab lists it. The
   * jobs dispatched in one turn of the event loop (concurrent status changes) share one addBulk,
   * sent at the loop's next check phase: no added wait, one Redis round trip for all.
   */
  dispatch(jobs: DeliveryJobSource[], lane: Lane = 'maintenance'): void {
    this.track(jobs, Promise.all(jobs.map((job) => this.batches.submit({ job, lane }))));
  }

  /**
   * The jobs of events whose turn came (`promoteWaiting`), queued as `dispatch` does (without
   * making the caller wait): a job of the same cycle that ended — a parked one completes — is
   * removed first, or Bull would take the new one for a duplicate.
   */
  requeue(jobs: DeliveryJobSource[]): void {
    this.track(
      jobs,
      Promise.all(jobs.map((job) => this.jobIsGone(job))).then(() => this.enqueue(jobs)),
    );
  }

  /** An enqueue under way, awaited at shutdown; a failure is logged, and the sweeper relays the events. */
  private track(jobs: DeliveryJobSource[], enqueue: Promise<unknown>): void {
    if (jobs.length === 0) return;
    const pending = enqueue
      .then(() => undefined)
      .catch((error: unknown) => {
        this.logger.warn(
          `could not enqueue ${jobs.length} webhook event(s), the sweeper will relay them: ${(error as Error).message}`,
        );
      })
      .finally(() => this.inFlight.delete(pending));
    this.inFlight.add(pending);
  }

  /** The jobs of events that were just committed: queued (a client's own change in the fresh lane,
   * the dead events of a retention pass in the maintenance one), and every process's event streams woken. */
  dispatchNew(jobs: DeliveryJobSource[], lane: Lane = 'fresh'): void {
    this.dispatch(jobs, lane);
    this.announcer.announce(jobs.map((job) => job.accountId));
  }

  /** Events just committed that wait their turn (a retention pass's): no job yet, every process's event streams woken. */
  announceWaiting(jobs: DeliveryJobSource[]): void {
    this.announcer.announce(jobs.map((job) => job.accountId));
  }

  /**
   * Awaitable form for the sweeper and the dashboard; re-adding an existing (id, cycle) is a no-op.
   * Each MULTI's refusal (an OOM) surfaces under its own name, not as EXECABORT.
   */
  async enqueue(jobs: DeliveryJobSource[]): Promise<void> {
    await this.add(jobs.map((job) => deliveryJob(job)));
  }

  /**
   * Bull's addBulk is one MULTI, which Redis runs whole before it serves any other client: a relay
   * pass's 500 adds held every other command (a rate-limit check, a fresh job's add) for 8-31 ms on an
   * idle machine, 2.4-8 ms in MULTIs of ADD_CHUNK (docs/performance.md).
   */
  private async add(jobs: ReturnType<typeof deliveryJob>[]): Promise<void> {
    for (let from = 0; from < jobs.length; from += ADD_CHUNK) await this.addChunk(jobs.slice(from, from + ADD_CHUNK));
  }

  private async addChunk(bulk: ReturnType<typeof deliveryJob>[]): Promise<void> {
    if (bulk.length === 0) return;
    const added = await this.queue.addBulk(bulk).catch((error: unknown) => {
      throw withRedisCause(error);
    });
    // Bull ignores the errors of single commands in its MULTI and hands back such a job without an
    // id. After an OOM discarded a MULTI, ioredis takes the add script as loaded on that connection,
    // and every later MULTI gets NOSCRIPT; a single add loads the script again (and re-adding an
    // existing job id is a no-op).
    for (const [index, job] of bulk.entries()) {
      if (added?.[index]?.id === undefined || added?.[index]?.id === null)
        await this.queue.add(job.name, job.data, job.opts);
    }
  }

  /** How many jobs wait for a worker (the relay's measure of room in the queue). */
  waitingCount(): Promise<number> {
    return this.queue.getWaitingCount();
  }

  /**
   * Whether the event's cycle has no live job (none, or one that already ended: removed so it can be
   * added again). Ended is read from the completed and failed sets, never by getState (see retirable).
   */
  async jobIsGone(event: Pick<DeliveryJobSource, 'id' | 'cycle'>): Promise<boolean> {
    const job = await this.queue.getJob(deliveryJobId({ eventId: event.id, cycle: event.cycle }));
    if (!job) return true;
    if (!(await job.isCompleted()) && !(await job.isFailed())) return false;
    await job.remove();
    return true;
  }

  /**
   * Once a redelivery's cycle starts, the job of the cycle before it leaves the queue (a failed one
   * would still sit on the Failed tab as if the event were dead). A completed one stays: it is the
   * history of a delivery. One that is running cannot be removed, and ends as skipped.
   */
  async retirePreviousCycle(eventId: string, cycle: number): Promise<void> {
    const job = await this.queue.getJob(deliveryJobId({ eventId, cycle: cycle - 1 }));
    if (job && (await this.retirable(job))) await job.remove();
  }

  /**
   * Not running and not a delivery: failed, delayed, waiting or paused. Read without Bull's
   * getState, which scans the wait list whole in a script for each job it asks about (LRANGE 0 -1,
   * then a loop in Lua): 0.2 ms at 1,000 jobs waiting, so a relay pass asking about 500 queued jobs
   * held Redis, and every request that needs it, for about 0.1 s (docs/performance.md). The sets are
   * read by ZSCORE, the lists by LPOS (0.015 ms there; Redis 6.0.6, and the service needs 6.2 for
   * GETDEL), in the server's own code.
   */
  private async retirable(job: Job): Promise<boolean> {
    if (await job.isCompleted()) return false;
    if ((await job.isFailed()) || (await job.isDelayed())) return true;
    const inList = async (list: string) =>
      (await this.queue.client.lpos(this.queue.toKey(list), String(job.id))) !== null;
    return !(await inList('active')) && ((await inList('wait')) || (await inList('paused')));
  }

  async onApplicationShutdown(): Promise<void> {
    // Bounded: with Redis down an enqueue may wait for a connection that never comes.
    const bound = new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_ENQUEUE_WAIT_MS).unref());
    await Promise.race([Promise.all(this.inFlight), bound]);
    await closeDeliveryQueue(this.queue).catch(() => undefined);
  }
}
