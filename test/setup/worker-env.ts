/**
 * Runs first in each spec file (Jest's setupFiles). Every worker has a queue prefix of its own under the
 * run's (`<run prefix>_w<N>`): a spec file's isolation step clears its worker's keys, never another
 * worker's. On a parallel run, workers 2..N also get a database of their own (`<run database>_w<N>`,
 * cloned from the run's migrated one by global-setup), so spec files on different workers never share
 * a pending event or a counter; worker 1, and a run in band, use the run's database.
 */
import { workerDatabaseUrl, workerQueuePrefix } from './worker-names';

const worker = Number(process.env.JEST_WORKER_ID ?? '1');
if (process.env.KYC_TEST_RUN_DATABASE_URL && process.env.KYC_TEST_RUN_QUEUE_PREFIX) {
  process.env.QUEUE_PREFIX = workerQueuePrefix(process.env.KYC_TEST_RUN_QUEUE_PREFIX, worker);
  if (worker > 1) process.env.DATABASE_URL = workerDatabaseUrl(process.env.KYC_TEST_RUN_DATABASE_URL, worker);
}
