import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { DEPENDENCIES, DependencyProbe } from 'src/ops/dependency-probe';
import { dependencyUp } from 'src/ops/ops-metrics';

/**
 * Keeps kyc_dependency_up fresh in every process: the readiness checks, at start and every
 * OUTBOX_SWEEP_INTERVAL_MS. Each check is bounded in time, so a hung dependency reads 0.
 */
@Injectable()
export class DependencyGauges implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DependencyGauges.name);
  private timer?: NodeJS.Timeout;
  private updating?: Promise<void>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly probe: DependencyProbe,
  ) {}

  onApplicationBootstrap(): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), this.config.sweepIntervalMs);
  }

  private tick(): void {
    if (this.updating) return;
    this.updating = this.update()
      .catch((error: unknown) => this.logger.warn(`dependency gauges not updated: ${(error as Error).message}`))
      .finally(() => (this.updating = undefined));
  }

  async update(): Promise<void> {
    const down = new Set(await this.probe.down());
    for (const dependency of DEPENDENCIES) dependencyUp.set({ dependency }, down.has(dependency) ? 0 : 1);
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.updating;
  }
}
