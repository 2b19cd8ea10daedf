import type { NextFunction, Request, Response } from 'express';
import { httpRequestDuration } from 'src/common/metrics';
import { routeTemplate } from 'src/http/route-template';

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
