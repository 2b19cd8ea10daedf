import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from 'src/ops/health.controller';
import { MetricsController } from 'src/ops/metrics.controller';
import { OpsRedis } from 'src/ops/ops-redis';

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController, MetricsController],
  providers: [OpsRedis],
})
export class OpsModule {}
