import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { RetentionService } from 'src/retention/retention.service';

/**
 * The worker role's retention schedule: a pass every RETENTION_INTERVAL_MS (one at a time per
 * process; other workers' passes run beside it on other rows). On shutdown the pass stops after its
 * current batch.
 */
@Injectable()
export class RetentionWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RetentionWorker.name);
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopping = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly retention: RetentionService,
  ) {}

  onApplicationBootstrap(): void {
    this.logger.log(`retention: ${this.retention.describe()}`);
    if (!this.retention.enabled) return;
    this.timer = setInterval(() => this.pass(), this.config.retentionIntervalMs);
  }

  private pass(): void {
    if (this.running) return;
    this.running = this.retention
      .run(() => !this.stopping)
      .then(() => undefined)
      .catch((error: unknown) => this.logger.warn(`retention pass failed: ${(error as Error).message}`))
      .finally(() => (this.running = undefined));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
