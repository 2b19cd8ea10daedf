import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { metricsRegistry } from 'src/common/metrics';
import { UndeclaredInputGuard } from 'src/http/undeclared-input.guard';
// Registered in every role, so that every process serves the same series (a worker limits nothing: 0).
import 'src/auth/rate-limit/rate-limit-metrics';

@ApiTags('operations')
@UseGuards(UndeclaredInputGuard)
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', metricsRegistry.contentType)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Prometheus metrics: HTTP latency by route and status, queue depth, deliveries, process' })
  @ApiOkResponse({
    description: 'Prometheus text exposition format',
    content: {
      'text/plain': { schema: { type: 'string', example: 'webhook_delivery_attempts_total{outcome="delivered"} 42' } },
    },
  })
  async metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
