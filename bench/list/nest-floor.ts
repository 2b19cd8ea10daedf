/**
 * The framework floor for the list benchmark: floor-core.ts's work — the same as floor-server.ts —
 * served by a bare Nest + Express app: one controller, no middleware, body parser, guards, pipes,
 * interceptors or logging, and Express's ETag and X-Powered-By off as in the service. The service
 * minus this is what our own pipeline costs; this minus floor-server.ts is what Nest and Express
 * cost.
 * Started by main.ts as its own process: FLOOR_PORT, DATABASE_URL, SECRET_ENCRYPTION_KEY.
 */
import 'reflect-metadata';
import { Controller, Get, Headers, Module, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Request, Response } from 'express';
import { LIST_PATH, closeFloorPool, listPage } from './floor-core';

@Controller(LIST_PATH.slice(1))
class FloorController {
  @Get()
  async list(
    @Headers('authorization') authorization: string | undefined,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<unknown> {
    const reply = await listPage(authorization, new URL(req.url, 'http://floor').searchParams);
    res.status(reply.status);
    return reply.body;
  }
}

@Module({ controllers: [FloorController] })
class FloorModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create<NestExpressApplication>(FloorModule, { logger: ['error'], bodyParser: false });
  app.set('etag', false);
  app.disable('x-powered-by');
  app.getHttpAdapter().getHttpServer().keepAliveTimeout = 65_000;
  await app.listen(Number(process.env.FLOOR_PORT ?? 3998), '127.0.0.1');
  process.once('SIGTERM', () => {
    void app.close().then(closeFloorPool);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`nest floor: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
