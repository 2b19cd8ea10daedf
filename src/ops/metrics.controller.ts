import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { metricsRegistry } from 'src/common/metrics';
import { UndeclaredInputGuard } from 'src/common/undeclared-input.guard';

@ApiTags('operations')
@UseGuards(UndeclaredInputGuard)
@Controller('metrics')
export class MetricsController {
  @Get()
  @Header('Content-Type', metricsRegistry.contentType)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Prometheus metrics: HTTP latency by route and status, queue depth, deliveries, process' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format' })
  async metrics(): Promise<string> {
    return metricsRegistry.metrics();
  }
}
