import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { NIL as BELOW_EVERY_ACCOUNT } from 'uuid';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { AccountConcurrency } from 'src/webhooks/delivery/account-concurrency';
import { advanceEach } from 'src/webhooks/delivery/advance-each';
import { splitByRoom } from 'src/webhooks/delivery/relay-room';
import { EndpointLifecycle } from 'src/webhooks/endpoint/endpoint-lifecycle.service';
import { maintenanceSlots } from 'src/webhooks/queue/delivery-job';
import { DeliveryQueue } from 'src/webhooks/queue/delivery-queue.service';
import type { DeliveryJobSource } from 'src/webhooks/tables/event-rows';
import { WebhookEventRepository } from 'src/webhooks/tables/webhook-event.repository';

/** An event is relayed once it is this late: well past the enqueue after commit or a Bull delay. */
const OVERDUE_MS = 3_000;
const BATCH = 500;
const SWEEP_LOCK = 7_277_003;

/** While relaying a backlog, the sweep waits for the queue to hold fewer waiting jobs than this, and
 * for no longer than QUEUE_WAIT_MS (the next sweep goes on then, after its other duties). */
const QUEUED_BOUND = 2 * BATCH;
const QUEUE_POLL_MS = 100;
const QUEUE_WAIT_MS = 5_000;
/** A sweep relays passes for at most this long, so the releases and the unsettled endpoints it moves on
 * first are looked at again during a long drain, and a trickle of lost events cannot hold it forever. */
const RELAY_MS = 60_000;

/**
 * The relay: finds pending events that are due but have no live job (Redis was down at commit, the
 * process died between commit and enqueue, an operator removed or cleaned the job in the dashboard)
 * and enqueues them again. Safe with many workers: one sweeps at a time (advisory lock), and job
 * ids make re-adds no-ops. A pass that relays any event is followed by another as soon as the
 * queue has room (fewer than QUEUED_BOUND jobs waiting), for up to RELAY_MS, so a backlog (after a
 * Redis outage) drains at the rate deliveries run, never flooding Redis with it; relayed events are
 * due again from the relay's time, so the next pass takes the next ones, until one finds none left.
 *
 * A pass queues at most four windows of an account's events (`splitByRoom`), and none of an account
 * that holds every slot of its maintenance lane: a worker would only set those aside one job at a
 * time (`park`). They wait their turn in the database instead, set aside in one statement, and go
 * out as the account's deliveries end (`advance`). So one account's backlog behind its busy endpoint
 * never fills the queue that another account's lost event is relayed to, while a backlog spread over
 * accounts whose deliveries keep up goes straight to the queue, as before: the way through waiting
 * costs a promotion per delivery, which halved the drain of a Redis outage's backlog when every
 * account's share went that way (docs/performance.md).
 */
@Injectable()
export class WebhookSweeper {
  private readonly logger = new Logger(WebhookSweeper.name);
  /** An account's maintenance slots: its deliveries of that lane in flight at a time. */
  private readonly window: number;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly events: WebhookEventRepository,
    private readonly deliveryQueue: DeliveryQueue,
    private readonly endpoints: EndpointLifecycle,
    private readonly slots: AccountConcurrency,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.window = maintenanceSlots(config.webhookMaxInFlightPerAccount);
  }

  private stopped = false;
  /** The last account the previous sweep moved on, when it stopped short of the last one waiting. */
  private waitingAfter?: string;

  /** One sweep; returns how many events were (re)enqueued. */
  async sweep(): Promise<number> {
    await this.advanceReleases();
    // An endpoint change whose release or hold was cut short (its process stopped) goes on here.
    for (const accountId of await this.endpoints.unsettled(BATCH)) this.endpoints.settleInBackground(accountId);
    let relayed = 0;
    const until = Date.now() + RELAY_MS;
    for (let pass = await this.relay(); ; pass = await this.relay()) {
      relayed += pass;
      if (pass === 0 || Date.now() > until || !(await this.queueHasRoom())) return relayed;
    }
  }

  /** The worker stops: a sweep relaying a backlog ends after its current pass. */
  stop(): void {
    this.stopped = true;
  }

  /** Waits until fewer than QUEUED_BOUND jobs are waiting; false if the worker stops or the wait runs out. */
  private async queueHasRoom(): Promise<boolean> {
    for (const until = Date.now() + QUEUE_WAIT_MS; !this.stopped && Date.now() < until;) {
      if ((await this.deliveryQueue.waitingCount()) < QUEUED_BOUND) return true;
      await new Promise((resolve) => setTimeout(resolve, QUEUE_POLL_MS));
    }
    return false;
  }

  /**
   * Events waiting their turn (released, replayed, parked, or written by a retention pass) go on when
   * an attempt of their account lets the next through; for an account with none in flight (its first
   * ones, or the worker that made its last died before it did), this moves them on. BATCH accounts a
   * sweep, going round them in id order from where the last sweep stopped, so with more accounts
   * than that waiting, none waits for the ones before it to drain. Concurrent calls are harmless:
   * each account's promotions are one at a time.
   */
  private async advanceReleases(): Promise<void> {
    const after = this.waitingAfter;
    const accounts = await this.events.accountsWithWaiting(BATCH, after ?? BELOW_EVERY_ACCOUNT);
    // Short of a batch, the list reached the last account: it goes on from the first (uuids compare
    // as their lower-case text does), and the next sweep from where this one stops.
    if (accounts.length < BATCH && after !== undefined) {
      const first = await this.events.accountsWithWaiting(BATCH - accounts.length, BELOW_EVERY_ACCOUNT);
      accounts.push(...first.filter((accountId) => accountId <= after));
    }
    this.waitingAfter = accounts.length === BATCH ? accounts[BATCH - 1] : undefined;
    const { failed, lastError } = await advanceEach(accounts, (accountId) => this.endpoints.advance(accountId));
    if (failed > 0) this.logger.warn(`could not move on the waiting events of ${failed} account(s): ${lastError}`);
  }

  private async relay(): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = (await manager.query('SELECT pg_try_advisory_xact_lock($1) AS locked', [SWEEP_LOCK])) as {
        locked: boolean;
      }[];
      if (!locked) return 0;
      const due = await this.events.overdue(manager, OVERDUE_MS / 1000, BATCH);
      // The pass asks Redis about every event at once: one account's hundreds of queued jobs must
      // not make another account's lost one wait for as many round trips.
      const lost = await Promise.all(due.map((event) => this.deliveryQueue.jobIsGone(event)));
      const missing = due.filter((_, i) => lost[i]);
      if (missing.length === 0) return 0;
      const held = await this.slots.held([...new Set(missing.map((event) => event.accountId))]);
      const { queued, parked } = splitByRoom(missing, held, this.window);
      await this.events.setDue(queued.map(refOf), 'now', manager);
      if (parked.length > 0) {
        await this.events.setDue(parked.map(refOf), 'waiting', manager);
        await this.slots.markWaiting([...new Set(parked.map((event) => event.accountId))]);
      }
      await this.deliveryQueue.enqueue(queued);
      this.logger.log(`relayed ${missing.length} webhook event(s) to the delivery queue`);
      if (parked.length > 0)
        this.logger.log(
          `${parked.length} of them wait their turn: their accounts have the most deliveries in flight or queued`,
        );
      return missing.length;
    });
  }
}

function refOf(event: DeliveryJobSource): { eventId: string; cycle: number } {
  return { eventId: event.id, cycle: event.cycle };
}
