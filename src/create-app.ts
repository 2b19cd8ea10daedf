import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from 'src/app.module';
import { configureHttp } from 'src/common/http-pipeline';
import { NestPinoLogger } from 'src/common/logging/nest-logger';
import { rootLogger } from 'src/common/logging/root-logger';
import type { AppConfig } from 'src/config/app-config';
import { setupOpenApi } from 'src/ops/openapi';
import { mountQueueDashboard, workerHttpOnly } from 'src/webhooks/queue-dashboard';

/** The service as `main.ts` runs it, not yet listening; `npm run demo` boots the same thing in-process. */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
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
  return app;
}
