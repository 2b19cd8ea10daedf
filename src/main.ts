import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from 'src/app.module';
import { configureHttp } from 'src/common/http-pipeline';
import { NestPinoLogger } from 'src/common/logging/nest-logger';
import { rootLogger } from 'src/common/logging/root-logger';
import { ConfigError } from 'src/config/app-config';
import { loadConfig } from 'src/config/config.module';
import { setupOpenApi } from 'src/ops/openapi';
import { mountQueueDashboard, workerHttpOnly } from 'src/webhooks/queue-dashboard';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const app = await NestFactory.create<NestExpressApplication>(AppModule, {
    bodyParser: false,
    logger: new NestPinoLogger(rootLogger()),
  });
  configureHttp(app);
  if (config.appRole === 'worker') app.use(workerHttpOnly);
  else {
    mountQueueDashboard(app);
    setupOpenApi(app);
  }
  // SIGTERM: stop taking jobs, finish in-flight deliveries, close Redis and PostgreSQL, exit 0.
  app.enableShutdownHooks([], { useProcessExit: true });
  await app.listen(config.port);
}

bootstrap().catch((error: unknown) => {
  process.stderr.write(error instanceof ConfigError ? `${error.message}\n` : `Failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
