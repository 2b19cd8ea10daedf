import { BullAdapter } from '@bull-board/api/bullAdapter';
import type { Job, Queue } from 'bull';
import type { ApiError } from 'src/common/api-error';
import type { DeliveryJobData } from 'src/webhooks/queue/delivery-job';
import type { DashboardDeliveries } from 'src/webhooks/dashboard/dashboard-deliveries.service';

/** An error bull-board answers with the status it carries (its error handler reads `statusCode`). */
function dashboardRefusal(error: ApiError): Error {
  return Object.assign(new Error(error.message), { statusCode: error.status });
}

type BoardJob = NonNullable<Awaited<ReturnType<BullAdapter['getJob']>>>;
type JobStatuses = Parameters<BullAdapter['getJobs']>[0];

const RETURN_VALUES: Record<string, string> = {
  delivered: 'delivered',
  skipped: 'skipped: a later delivery cycle replaced this one, or the event is gone or held',
  held: "held: the account's webhook endpoint is disabled; enabling it queues a new cycle",
};

/**
 * bull-board's view of the delivery queue, with the buttons doing what the database needs: every
 * job it hands the board has Retry = redeliver (a new cycle through DashboardDeliveries; the old job
 * leaves the Failed tab) and Promote = attempt now (the event's next attempt is made due first,
 * else the worker would find it early and put it back). "Retry all" and "Promote all" go through
 * the same jobs, so they do the same, in batches.
 */
export class DeliveryBoardAdapter extends BullAdapter {
  constructor(
    queue: Queue,
    private readonly operator: DashboardDeliveries,
  ) {
    super(queue, {
      displayName: 'Webhook deliveries',
      description:
        'One job per delivery cycle of a webhook event, named by its type. Logs: one line per attempt. ' +
        'Failed: dead deliveries (retries used up, or no webhook_url); Retry redelivers (same webhook-id). ' +
        'Delayed: waiting for the next attempt; Promote attempts now.',
    });
    this.setFormatter('returnValue', (value: unknown) =>
      typeof value === 'string' ? (RETURN_VALUES[value] ?? value) : value,
    );
  }

  override async getJob(id: string): Promise<BoardJob | undefined | null> {
    const job = await super.getJob(id);
    return job && this.withOperatorActions(job as unknown as Job<DeliveryJobData>);
  }

  override async getJobs(statuses: JobStatuses, start?: number, end?: number): Promise<BoardJob[]> {
    const jobs = await super.getJobs(statuses, start, end);
    return jobs.map((job) => this.withOperatorActions(job as unknown as Job<DeliveryJobData>));
  }

  private withOperatorActions(job: Job<DeliveryJobData>): BoardJob {
    // BullAdapter adds one to Bull's attemptsMade (the runs that threw) to count the run that
    // completed; for a failed, delayed or waiting job there is none, and the card would say
    // "attempt #4" over a log of 3 attempts.
    if (job.returnvalue === null || job.returnvalue === undefined) job.attemptsMade -= 1;
    const promote = job.promote.bind(job);
    job.retry = async () => {
      // A job whose event is gone (deleted by retention) has nothing to revive: it only leaves the
      // Failed tab, so that "Retry all" goes on through the others.
      const redelivery = await this.operator.redeliver(job.data.eventId);
      // Refused (the endpoint is disabled): the job stays failed, and the dashboard shows why.
      if (redelivery && 'refused' in redelivery) throw dashboardRefusal(redelivery.refused);
      if (await job.isFailed()) await job.remove();
    };
    job.promote = async () => {
      await this.operator.attemptNow(job.data);
      await promote();
    };
    return job as unknown as BoardJob;
  }
}
