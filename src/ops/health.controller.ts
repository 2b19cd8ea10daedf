import { Controller, Get, HttpException, Logger, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, HealthIndicatorService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { OpsRedis } from 'src/ops/ops-redis';

const CHECK_TIMEOUT_MS = 1_000;

/** Dependency names as they appear in the 503 body's `details[].field`. */
export const DEPENDENCIES = ['postgres', 'redis'] as const;

@ApiTags('operations')
@UseGuards(UndeclaredInputGuard)
@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Health');

  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly typeOrm: TypeOrmHealthIndicator,
    private readonly redis: OpsRedis,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: 200 while the process runs' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['status'],
      additionalProperties: false,
      properties: { status: { type: 'string', enum: ['ok'] } },
      example: { status: 'ok' },
    },
  })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: 200 when PostgreSQL and Redis answer within 1 s, else 503 naming each one down',
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['status', 'checks'],
      additionalProperties: false,
      properties: {
        status: { type: 'string', enum: ['ok'] },
        checks: {
          type: 'object',
          required: [...DEPENDENCIES],
          additionalProperties: false,
          properties: Object.fromEntries(DEPENDENCIES.map((name) => [name, { type: 'string', enum: ['up'] }])),
        },
      },
      example: { status: 'ok', checks: { postgres: 'up', redis: 'up' } },
    },
  })
  @ApiErrors(notReady(['redis']), notReady(['postgres', 'redis']))
  async ready(): Promise<{ status: 'ok'; checks: Record<string, 'up'> }> {
    try {
      await this.health.check([
        () => this.typeOrm.pingCheck('postgres').withTimeout(CHECK_TIMEOUT_MS),
        () =>
          this.indicators
            .check('redis')
            .attempt(() => this.redis.check())
            .withTimeout(CHECK_TIMEOUT_MS),
      ]);
      return { status: 'ok', checks: { postgres: 'up', redis: 'up' } };
    } catch (error) {
      const down = DEPENDENCIES.filter((name) => downIn(error, name));
      this.logger.warn({ down }, 'not ready');
      throw notReady(down);
    }
  }
}

function notReady(down: readonly string[]): ApiError {
  return new ApiError(
    'service_unavailable',
    `Not ready: ${down.length > 0 ? down.join(', ') : 'a dependency'} down`,
    down.map((field) => ({ field, issue: 'down' })),
  );
}

function downIn(error: unknown, name: string): boolean {
  if (!(error instanceof HttpException)) return true;
  const body = error.getResponse() as { details?: Record<string, { status?: string }> };
  return body.details?.[name]?.status !== 'up';
}
