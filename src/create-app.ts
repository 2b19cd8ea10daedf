import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { AppModule } from 'src/app.module';
import { PublicRateLimiter } from 'src/auth/public-rate-limiter';
import { sendError } from 'src/http/all-exceptions.filter';
import { ApiError } from 'src/common/api-error';
import { configureHttp } from 'src/http/http-pipeline';
import { NestPinoLogger } from 'src/common/logging/nest-logger';
import { rootLogger } from 'src/common/logging/root-logger';
import type { AppConfig } from 'src/config/app-config';
import { mountApiReference } from 'src/ops/api-reference';
import { setupOpenApi } from 'src/ops/openapi';
import { mountQueueDashboard } from 'src/ops/queue-dashboard';

/** A worker process serves only health and metrics; the API routes belong to `api` processes. */
function workerHttpOnly(req: Request, res: Response, next: NextFunction): void {
  if (req.path.startsWith('/health') || req.path === '/metrics') return next();
  sendError(res, req, new ApiError('not_found', `No route ${req.method} ${req.path}`));
}

/** The service as `main.ts` runs it, not yet listening: APP_ROLE picks its modules and HTTP surface. */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRole(config.appRole), {
    bodyParser: false,
    logger: new NestPinoLogger(rootLogger()),
  });
  if (config.appRole === 'worker') {
    configureHttp(app);
    app.use(workerHttpOnly);
  } else {
    configureHttp(app, { publicApi: app.get(PublicRateLimiter).handler });
    mountQueueDashboard(app);
    mountApiReference(app);
    setupOpenApi(app, {
      rateLimitPerMinute: config.rateLimitPerMinute,
      authFailureLimitPerMinute: config.authFailureLimitPerMinute,
      testEventsPerMinute: config.testEventsPerMinute,
      redeliveriesPerHour: config.redeliveriesPerHour,
    });
  }
  return app;
}
