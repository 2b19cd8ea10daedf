import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { createFailFastRedis } from 'src/redis/fail-fast-redis';
import { checkRedis, type RedisClient } from 'src/redis/redis-connection';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/** The readiness probe's own Redis connection, so a probe never queues behind the job queue. */
@Injectable()
export class OpsRedis implements OnModuleDestroy {
  private readonly logger = new Logger('Health');
  readonly client: RedisClient;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.client = createFailFastRedis(config, (message) => this.logger.warn(message), 1_000);
  }

  /** PING on one server; on a cluster, `cluster_state:ok` (every slot has a serving primary). */
  check(): Promise<void> {
    return checkRedis(this.client);
  }

  onModuleDestroy(): void {
    this.client.disconnect();
  }
}
