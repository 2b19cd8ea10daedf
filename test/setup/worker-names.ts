/** Worker N's database beside the run's: `<run database>_w<N>` on the same server. */
export function workerDatabaseUrl(runDatabaseUrl: string, worker: number): string {
  const url = new URL(runDatabaseUrl);
  url.pathname = `${url.pathname}_w${worker}`;
  return url.toString();
}

/**
 * Worker N's queue prefix: under the run's, so the run's teardown clears it with the rest. With at most
 * nine workers (global-setup refuses more) no worker's prefix starts with another's.
 */
export function workerQueuePrefix(runQueuePrefix: string, worker: number): string {
  return `${runQueuePrefix}_w${worker}`;
}
