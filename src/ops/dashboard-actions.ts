/** A state-changing call of the queue dashboard, as the audit trail names it (`dashboard.<name>`). */
export interface DashboardAction {
  action: string;
  target: { type: 'queue' | 'job' | 'queues'; id: string };
}

const QUEUE_ACTIONS: Record<string, string> = {
  pause: 'queue_paused',
  resume: 'queue_resumed',
  promote: 'jobs_promoted',
  empty: 'queue_emptied',
  obliterate: 'queue_obliterated',
  add: 'job_added',
  concurrency: 'queue_concurrency_set',
};

const JOB_ACTIONS: Record<string, string> = {
  retry: 'job_retried',
  clean: 'job_removed',
  promote: 'job_promoted',
  'update-data': 'job_data_updated',
  delay: 'job_delay_changed',
  priority: 'job_priority_changed',
};

/**
 * Which dashboard action a request is, from bull-board's API routes (`/api/queues/...` under the
 * dashboard's path); null for a read or a path it does not know. Pure, so the mapping is unit-tested.
 */
export function dashboardActionOf(method: string, path: string): DashboardAction | null {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return null;
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'api' || parts[1] !== 'queues') return null;
  const [, , queue, second, third] = parts;
  if (parts.length === 3 && (queue === 'pause' || queue === 'resume'))
    return {
      action: `dashboard.queues_${queue === 'pause' ? 'paused' : 'resumed'}`,
      target: { type: 'queues', id: 'all' },
    };
  if (!queue || !second) return null;
  if (second === 'retry' && third) return { action: 'dashboard.jobs_retried', target: { type: 'queue', id: queue } };
  if (second === 'clean' && third) return { action: 'dashboard.queue_cleaned', target: { type: 'queue', id: queue } };
  if (parts.length === 4 && QUEUE_ACTIONS[second])
    return { action: `dashboard.${QUEUE_ACTIONS[second]}`, target: { type: 'queue', id: queue } };
  if (third && JOB_ACTIONS[third])
    return { action: `dashboard.${JOB_ACTIONS[third]}`, target: { type: 'job', id: second } };
  return { action: 'dashboard.action', target: { type: 'queue', id: queue } };
}
