import { Gauge } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';

export const rateLimitMemoryFallback = new Gauge({
  name: 'rate_limit_memory_fallback',
  help: 'Whether this process counts its rate limits in its own memory (1) because Redis does not answer, or in Redis (0)',
  registers: [metricsRegistry],
});
rateLimitMemoryFallback.set(0);
