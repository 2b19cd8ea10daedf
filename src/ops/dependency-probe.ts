import { HttpException, Injectable } from '@nestjs/common';
import { HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { OpsRedis } from 'src/ops/ops-redis';

/** A dependency that does not answer within this is down: a hung one reads down, never a stale up. */
const CHECK_TIMEOUT_MS = 1_000;

/** Dependency names as they appear in the 503 body's `details[].field` and in kyc_dependency_up. */
export const DEPENDENCIES = ['postgres', 'redis'] as const;
export type Dependency = (typeof DEPENDENCIES)[number];

/**
 * The readiness checks: PostgreSQL (`SELECT 1`) and Redis (PING, or the cluster's state), each
 * bounded by CHECK_TIMEOUT_MS. /health/ready and the kyc_dependency_up gauge both ask it.
 */
@Injectable()
export class DependencyProbe {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly typeOrm: TypeOrmHealthIndicator,
    private readonly redis: OpsRedis,
  ) {}

  /** The dependencies that did not answer in time; empty when all are up. */
  async down(): Promise<Dependency[]> {
    try {
      await this.health.check([
        () => this.typeOrm.pingCheck('postgres').withTimeout(CHECK_TIMEOUT_MS),
        () =>
          this.indicators
            .check('redis')
            .attempt(() => this.redis.check())
            .withTimeout(CHECK_TIMEOUT_MS),
      ]);
      return [];
    } catch (error) {
      return DEPENDENCIES.filter((name) => downIn(error, name));
    }
  }
}

function downIn(error: unknown, name: string): boolean {
  if (!(error instanceof HttpException)) return true;
  const body = error.getResponse() as { details?: Record<string, { status?: string }> };
  return body.details?.[name]?.status !== 'up';
}
