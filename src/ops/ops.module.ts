import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HttpDrain } from 'src/http/http-drain';
import { DependencyGauges } from 'src/ops/dependency-gauges.service';
import { DependencyProbe } from 'src/ops/dependency-probe';
import { HealthController } from 'src/ops/health.controller';
import { MetricsController } from 'src/ops/metrics.controller';
import { OpsRedis } from 'src/ops/ops-redis';
import { WebhookGauges } from 'src/webhooks/queue/webhook-gauges.service';
import { WebhooksCoreModule } from 'src/webhooks/webhooks-core.module';

/** Health, metrics (with the dependency and delivery gauges) for every service role; not the CLI. */
@Module({
  imports: [TerminusModule.forRoot({ logger: false }), WebhooksCoreModule],
  controllers: [HealthController, MetricsController],
  providers: [OpsRedis, HttpDrain, DependencyProbe, DependencyGauges, WebhookGauges],
})
export class OpsModule {}
