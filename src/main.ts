import 'reflect-metadata';
import { applyServerLimits } from 'src/common/http-server-limits';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { createApp } from 'src/create-app';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config);
  // SIGTERM: stop taking jobs, finish in-flight deliveries, close Redis and PostgreSQL, exit 0.
  app.enableShutdownHooks([], { useProcessExit: true });
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
