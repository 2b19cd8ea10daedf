import 'reflect-metadata';
import { applyServerLimits } from 'src/http/http-server-limits';
import { HttpDrain } from 'src/http/http-drain';
import { rootLogger } from 'src/common/logging/root-logger';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { createApp } from 'src/create-app';
import { exitGracefullyOn } from 'src/shutdown';
import { WebhookWorker } from 'src/webhooks/delivery/webhook-worker.service';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const app = await createApp(config);
  const drain = app.get(HttpDrain);
  drain.attach(app.getHttpServer());
  exitGracefullyOn(app, config, drain, config.appRole === 'api' ? undefined : app.get(WebhookWorker));
  applyServerLimits(app.getHttpServer(), config.httpRequestTimeoutMs);
  await app.listen(config.port);
  const docs = config.appRole === 'worker' ? undefined : '/api/docs';
  rootLogger().info(
    { role: config.appRole, port: config.port, ...(docs ? { docs } : {}) },
    `ready: APP_ROLE=${config.appRole} on port ${config.port}${docs ? `, API documentation at ${docs}` : ''}`,
  );
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(
    error instanceof ConfigError
      ? `${error.message}\n`
      : `Failed to start: ${(error as Error).stack ?? String(error)}\n`,
  );
  process.exit(1);
});
