import 'reflect-metadata';
import { applyServerLimits } from 'src/http/http-server-limits';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { createApp } from 'src/create-app';

/** Beyond the delivery time-out the worker waits for in-flight deliveries. */
const SHUTDOWN_MARGIN_MS = 20_000;

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config);
  // SIGTERM: stop taking jobs, finish in-flight deliveries, close Redis and PostgreSQL, exit 0.
  app.enableShutdownHooks([], { useProcessExit: true });
  // Each step is bounded on its own; this bounds the whole, so a stuck connection cannot keep a
  // terminated process alive until the orchestrator's SIGKILL.
  const deadlineMs = config.webhookTimeoutMs + SHUTDOWN_MARGIN_MS;
  process.once('SIGTERM', () => {
    setTimeout(() => {
      process.stderr.write(`shutdown did not finish within ${deadlineMs} ms; exiting\n`);
      process.exit(1);
    }, deadlineMs).unref();
  });
  applyServerLimits(app.getHttpServer(), config.httpRequestTimeoutMs);
  await app.listen(config.port);
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(
    error instanceof ConfigError
      ? `${error.message}\n`
      : `Failed to start: ${(error as Error).stack ?? String(error)}\n`,
  );
  process.exit(1);
});
