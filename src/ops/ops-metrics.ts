import { Gauge } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';
import { buildInfo } from 'src/ops/build-info';

export const dependencyUp = new Gauge({
  name: 'kyc_dependency_up',
  help: 'Whether the dependency answered the readiness check (1) or not within 1 s (0), by dependency (postgres, redis)',
  labelNames: ['dependency'] as const,
  registers: [metricsRegistry],
});

const buildInfoGauge = new Gauge({
  name: 'kyc_build_info',
  help: 'Always 1; the labels say which release of the service (package.json version) runs on which Node.js',
  labelNames: ['version', 'node_version'] as const,
  registers: [metricsRegistry],
});
buildInfoGauge.set(buildInfo(), 1);
