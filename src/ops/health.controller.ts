import { Controller, Get, Logger, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiError } from 'src/common/api-error';
import { ApiErrors } from 'src/common/api-error-responses';
import { HttpDrain } from 'src/http/http-drain';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
import { DEPENDENCIES, DependencyProbe } from 'src/ops/dependency-probe';

@ApiTags('operations')
@UseGuards(UndeclaredInputGuard)
@Controller('health')
export class HealthController {
  private readonly logger = new Logger('Health');

  constructor(
    private readonly dependencies: DependencyProbe,
    private readonly drain: HttpDrain,
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
    summary:
      'Readiness: 200 when PostgreSQL and Redis answer within 1 s, else 503 naming each one down; 503 from SIGTERM on',
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
  @ApiErrors(notReady(['redis']), notReady(['postgres', 'redis']), shuttingDown())
  async ready(): Promise<{ status: 'ok'; checks: Record<string, 'up'> }> {
    if (this.drain.draining) throw shuttingDown();
    const down = await this.dependencies.down();
    if (down.length > 0) {
      if (this.drain.draining) throw shuttingDown();
      this.logger.warn({ down }, 'not ready');
      throw notReady(down);
    }
    // A check that began before SIGTERM must not answer 200 after it.
    if (this.drain.draining) throw shuttingDown();
    return { status: 'ok', checks: { postgres: 'up', redis: 'up' } };
  }
}

/** From SIGTERM on: the load balancer must stop sending before the process goes. */
function shuttingDown(): ApiError {
  return new ApiError('service_unavailable', 'Not ready: shutting down', [
    { field: 'process', issue: 'shutting down' },
  ]);
}

function notReady(down: readonly string[]): ApiError {
  return new ApiError(
    'service_unavailable',
    `Not ready: ${down.length > 0 ? down.join(', ') : 'a dependency'} down`,
    down.map((field) => ({ field, issue: 'down' })),
  );
}
