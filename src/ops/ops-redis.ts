import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import Redis from 'ioredis';
import { createFailFastRedis } from 'src/common/fail-fast-redis';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/** The readiness probe's own Redis connection, so a probe never queues behind the job queue. */
@Injectable()
export class OpsRedis implements OnModuleDestroy {
  private readonly logger = new Logger('Health');
  readonly client: Redis;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = createFailFastRedis(config.redisUrl, (message) => this.logger.warn(message), 1_000);
  }

  onModuleDestroy(): void {
    this.client.disconnect();
  }
}
