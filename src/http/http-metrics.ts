import type { NextFunction, Request, Response } from 'express';
import { Histogram } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics';
import { routeTemplate } from 'src/http/route-template';

const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});

/** Records every response in the latency histogram, labelled by route template, not raw URL. */
export function httpMetricsMiddleware(req: Request, res: Response, next: NextFunction): void {
  const started = process.hrtime.bigint();
  res.once('finish', () => {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    httpRequestDuration.observe(
      { method: req.method, route: routeTemplate(req), status: String(res.statusCode) },
      seconds,
    );
  });
  next();
}
