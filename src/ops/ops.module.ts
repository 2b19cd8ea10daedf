import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HttpDrain } from 'src/http/http-drain';
import { DependencyGauges } from 'src/ops/dependency-gauges.service';
import { DependencyProbe } from 'src/ops/dependency-probe';
import { HealthController } from 'src/ops/health.controller';
import { MetricsController } from 'src/ops/metrics.controller';
import { OpsRedis } from 'src/ops/ops-redis';

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController, MetricsController],
  providers: [OpsRedis, HttpDrain, DependencyProbe, DependencyGauges],
})
export class OpsModule {}
