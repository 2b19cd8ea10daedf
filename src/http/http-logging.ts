import type { NextFunction, Request, Response } from 'express';
import { runWithLogContext } from 'src/common/logging/log-context';
import type { RootLogger } from 'src/common/logging/logger';
import { loggedPath } from 'src/common/logging/root-logger';
import { requestIdOf } from 'src/http/request-id';
import { routeTemplate } from 'src/http/route-template';

interface AuthenticatedRequest extends Request {
  accountId?: string;
}

const QUIET_ROUTES = /^\/(?:health\/|metrics$)/;

/** Opens the request's log context, so every line logged while serving it carries its id. */
export function logContextMiddleware(req: Request, res: Response, next: NextFunction): void {
  runWithLogContext({ requestId: requestIdOf(req, res), request: req as AuthenticatedRequest }, next);
}

/**
 * One line per request, when its response is sent or its connection closes first: id, account,
 * method, route template (or clipped path if none), status, duration. 5xx lines are errors, health
 * and metrics lines debug, the rest info; nothing is built for a line the level leaves out.
 */
export function httpLogMiddleware(logger: RootLogger): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    const startedAt = Date.now();
    const done = (): void => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const level = res.statusCode >= 500 ? 'error' : QUIET_ROUTES.test(req.path ?? '') ? 'debug' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      const route = routeTemplate(req);
      logger[level](
        { request_id: requestIdOf(req), ...summary(req, res, route, Date.now() - startedAt) },
        `${req.method} ${route} ${res.statusCode}`,
      );
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}

function summary(req: AuthenticatedRequest, res: Response, route: string, durationMs: number): Record<string, unknown> {
  return {
    ...(req.accountId ? { account_id: req.accountId } : {}),
    method: req.method,
    route,
    ...(route === 'unmatched' ? { path: loggedPath(req.path ?? '') } : {}),
    status: res.statusCode,
    duration_ms: durationMs,
  };
}
