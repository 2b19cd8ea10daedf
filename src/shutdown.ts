import type { INestApplication } from '@nestjs/common';
import type { AppConfig } from 'src/config/app-config';
import { rootLogger } from 'src/common/logging/root-logger';
import type { HttpDrain } from 'src/http/http-drain';
import type { WebhookWorker } from 'src/webhooks/delivery/webhook-worker.service';

/** The contract's budget: exit within WEBHOOK_TIMEOUT_MS + 5 s of SIGTERM, even under load. */
const BUDGET_MARGIN_MS = 5_000;
/** Of that margin, what the HTTP drain may use; the rest closes the queue, Redis and the pools. */
const HTTP_MARGIN_MS = 2_000;

/**
 * SIGTERM (or SIGINT): the HTTP side stops taking work and the worker stops taking jobs at once;
 * once every HTTP connection has closed, the application closes (the worker waits for its
 * deliveries in flight, then Redis and PostgreSQL close) and the process exits 0. Past the budget
 * it exits 1.
 */
export function exitGracefullyOn(
  app: INestApplication,
  config: AppConfig,
  drain: HttpDrain,
  worker: WebhookWorker | undefined,
): void {
  let started = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (started) return;
    started = true;
    shutDown(app, config, drain, worker, signal).then(
      () => process.exit(0),
      (error: unknown) => {
        rootLogger().error({ err: error }, 'shutdown failed; exiting 1');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

async function shutDown(
  app: INestApplication,
  config: AppConfig,
  drain: HttpDrain,
  worker: WebhookWorker | undefined,
  signal: NodeJS.Signals,
): Promise<void> {
  const log = rootLogger();
  const startedAt = Date.now();
  const budgetMs = config.webhookTimeoutMs + BUDGET_MARGIN_MS;
  setTimeout(() => {
    log.error({ budget_ms: budgetMs }, `shutdown did not finish within ${budgetMs} ms; exiting 1`);
    process.exit(1);
  }, budgetMs).unref();

  const requests = drain.inFlight;
  const connections = drain.connections;
  const draining = drain.drain(config.webhookTimeoutMs + HTTP_MARGIN_MS);
  const deliveries = worker?.stopTakingJobs();
  log.info(
    {
      signal,
      role: config.appRole,
      requests_in_flight: requests,
      connections,
      ...(deliveries === undefined ? {} : { deliveries_in_flight: deliveries }),
    },
    `${signal}: not ready, listener closed, keep-alive closing; draining ${requests} requests` +
      (deliveries === undefined ? '' : ` and ${deliveries} deliveries`),
  );

  const http = await draining;
  await app.close();
  const fields = {
    duration_ms: Date.now() - startedAt,
    requests_answered: http.answered,
    requests_abandoned: http.abandoned,
    ...(deliveries === undefined ? {} : { deliveries_waited_for: deliveries }),
  };
  const message =
    `drained in ${fields.duration_ms} ms: ${http.answered} requests answered after ${signal}` +
    (http.abandoned > 0 ? `, ${http.abandoned} read but cut off at the deadline` : '') +
    (deliveries === undefined ? '' : `, ${deliveries} deliveries waited for`) +
    '; exiting 0';
  if (http.abandoned > 0) log.warn(fields, message);
  else log.info(fields, message);
}
