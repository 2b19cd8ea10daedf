import type { NextFunction, Request, Response } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pinoHttp from 'pino-http';
import { runWithLogContext } from 'src/common/logging/log-context';
import type { RootLogger } from 'src/common/logging/logger';
import { loggedPath } from 'src/common/logging/root-logger';
import { requestIdOf } from 'src/common/request-id';
import { routeTemplate } from 'src/common/route-template';

interface AuthenticatedRequest extends Request {
  accountId?: string;
}

const QUIET_ROUTES = /^\/(?:health\/|metrics$)/;

/** Opens the request's log context, so every line logged while serving it carries its id. */
export function logContextMiddleware(req: Request, res: Response, next: NextFunction): void {
  runWithLogContext({ requestId: requestIdOf(req, res), request: req as AuthenticatedRequest }, next);
}

/** One line per request: id, account, method, route template (or clipped path if none), status, duration. */
export function httpLogMiddleware(logger: RootLogger): (req: IncomingMessage, res: ServerResponse) => void {
  return pinoHttp({
    logger,
    genReqId: (req) => requestIdOf(req),
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'request_id' },
    serializers: { req: () => undefined, res: () => undefined },
    customLogLevel: (req, res, error) => {
      if (error || res.statusCode >= 500) return 'error';
      return QUIET_ROUTES.test((req as Request).path ?? '') ? 'debug' : 'info';
    },
    customSuccessObject: (req, res, value: { responseTime?: number }) =>
      summary(req as AuthenticatedRequest, res, value.responseTime),
    customErrorObject: (req, res, _error, value: { responseTime?: number }) =>
      summary(req as AuthenticatedRequest, res, value.responseTime),
    customSuccessMessage: (req, res) => `${req.method} ${routeTemplate(req as Request)} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${routeTemplate(req as Request)} ${res.statusCode}`,
  });
}

function summary(
  req: AuthenticatedRequest,
  res: ServerResponse,
  durationMs: number | undefined,
): Record<string, unknown> {
  // request_id is bound by pino-http's request logger (customAttributeKeys.reqId).
  const route = routeTemplate(req);
  return {
    ...(req.accountId ? { account_id: req.accountId } : {}),
    method: req.method,
    route,
    ...(route === 'unmatched' ? { path: loggedPath(req.path ?? '') } : {}),
    status: res.statusCode,
    duration_ms: durationMs,
  };
}
