import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import { type INestApplication, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import type { NextFunction, Request, Response } from 'express';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { AuthFailureLimit } from 'src/auth/auth-failure-limit';
import { OperatorCredentials } from 'src/auth/operator-credential';
import { dashboardActionOf } from 'src/ops/dashboard-actions';
import { errorForStatus, sendError } from 'src/http/all-exceptions.filter';
import { ApiError, ENDPOINT_DISABLED } from 'src/common/api-error';
import { loggedPath } from 'src/common/logging/root-logger';
import { requestIdOf } from 'src/http/request-id';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { dashboardAuth } from 'src/ops/dashboard-auth';
import { DashboardLogin, LOGIN_PATH } from 'src/ops/dashboard-login';
import { DashboardSessions } from 'src/ops/dashboard-sessions';
import { OidcLogin } from 'src/operators/oidc-login';
import type { OidcVerifier } from 'src/operators/oidc-verifier';
import { OIDC_VERIFIER } from 'src/operators/operators.module';
import { isCrossSiteWrite } from 'src/ops/dashboard-origin';
import { DeliveryBoardAdapter } from 'src/webhooks/dashboard/delivery-board.adapter';
import { DashboardDeliveries } from 'src/webhooks/dashboard/dashboard-deliveries.service';
import { DELIVERY_PRODUCER } from 'src/webhooks/queue/webhook-queue.constants';

type BoardOptions = Parameters<typeof createBullBoard>[0];

export const DASHBOARD_PATH = '/admin/queues';

const dashboardLogger = new Logger('QueueDashboard');

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/**
 * Browsers send cached Basic credentials by themselves, so a page of another origin could make an
 * operator's browser press the dashboard's buttons. Any method but GET/HEAD whose Origin is not the
 * one the service was addressed by (the socket's scheme, `trust proxy` being off, and the Host
 * header), or whose Sec-Fetch-Site is cross-site or same-site, is 403 before anything runs.
 */
export function refuseCrossSiteWrites() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const host = header(req, 'host');
    const request = {
      method: req.method,
      origin: header(req, 'origin'),
      secFetchSite: header(req, 'sec-fetch-site'),
      ownOrigin: host ? `${req.protocol}://${host}` : undefined,
    };
    if (!isCrossSiteWrite(request)) return next();
    dashboardLogger.warn(
      { method: req.method, path: loggedPath(req.path), origin: request.origin, secFetchSite: request.secFetchSite },
      'queue dashboard: cross-site request refused',
    );
    sendError(res, req, ApiError.crossSiteRequest());
  };
}

/**
 * Records each state-changing dashboard call that succeeded (`dashboard.<action>`, the actor the
 * credential proved) before its answer leaves: bull-board answers every success with `res.json`.
 * A call the trail cannot record is answered 503 (its Redis-side effect cannot be undone).
 */
export function auditDashboardActions(trail: Pick<AuditTrail, 'recordAlone'>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const action = dashboardActionOf(req.method, req.path);
    if (!action) return next();
    const json = res.json.bind(res);
    res.json = (body: unknown): Response => {
      res.json = json;
      if (res.statusCode >= 400) return json(body);
      trail.recordAlone({ ...action, changes: [] }).then(
        () => json(body),
        () => sendError(res, req, ApiError.databaseUnavailable()),
      );
      return res;
    };
    next();
  };
}

interface BoardErrorBody {
  error?: { key?: unknown; code?: unknown } | string;
  message?: unknown;
}

/**
 * Every page and call of the dashboard needs Redis: while the queue's client is not connected the
 * dashboard answers 503 at once (bull-board would answer 500, or hang on the page's fetches).
 */
export function requireRedis(queue: Pick<Queue, 'client'>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (queue.client.status === 'ready') return next();
    sendError(res, req, ApiError.dependencyUnavailable('redis'));
  };
}

/**
 * bull-board answers its API errors (an unknown queue or job, a job in a state that forbids the
 * action, Redis down) with bodies of its own, `{ error: { key }, message }`. Like every other
 * route's, they leave with the contract's error body; the status stays bull-board's (a 409 stays a
 * 409). Its UI reads only top-level `error` and `message` strings, so its error toast for them
 * (a 403 for a role included) shows an icon without text. Bodies already in the contract's shape
 * (Nest's own 404 under this path) pass unchanged.
 */
export function contractErrorBodies(queue: Pick<Queue, 'client'>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const json = res.json.bind(res);
    res.json = (body: unknown): Response => {
      res.json = json;
      return json(contractBody(req, res, body, queue.client.status === 'ready'));
    };
    next();
  };
}

function contractBody(req: Request, res: Response, body: unknown, redisReady: boolean): unknown {
  const board = (body ?? {}) as BoardErrorBody;
  const error = typeof board.error === 'object' ? board.error : undefined;
  if (res.statusCode < 400 || typeof error?.code === 'string') return body;
  const reported =
    typeof board.message === 'string' && board.message
      ? board.message
      : typeof error?.key === 'string'
        ? error.key
        : undefined;
  if (res.statusCode >= 500) {
    dashboardLogger.warn(
      { method: req.method, path: loggedPath(req.path), status: res.statusCode, reported },
      'queue dashboard error',
    );
  }
  // A call that failed because Redis went away meanwhile is a 503 like the ones the gate answers.
  if (res.statusCode >= 500 && !redisReady) {
    const unavailable = ApiError.dependencyUnavailable('redis');
    res.status(unavailable.status);
    for (const [name, value] of Object.entries(unavailable.headers)) res.setHeader(name, value);
    return unavailable.toBody(requestIdOf(req, res));
  }
  // Retry on a failed job of an account whose endpoint is disabled (DeliveryBoardAdapter).
  const contractError =
    res.statusCode === 409 && reported?.startsWith(ENDPOINT_DISABLED)
      ? new ApiError('endpoint_disabled', reported)
      : errorForStatus(res.statusCode, reported ?? `The queue dashboard refused the request (HTTP ${res.statusCode})`);
  return contractError.toBody(requestIdOf(req, res));
}

/** The dashboard's OIDC login, when OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and PUBLIC_BASE_URL are set. */
function dashboardLogin(app: INestApplication, config: AppConfig, queue: Queue): DashboardLogin | null {
  const verifier = app.get<OidcVerifier | null>(OIDC_VERIFIER);
  if (!config.oidc?.login || !verifier) return null;
  const { login } = config.oidc;
  const sessions = new DashboardSessions(queue.client, config.queuePrefix);
  const ready = (): boolean => queue.client.status === 'ready';
  return new DashboardLogin(new OidcLogin(config.oidc, login, verifier), sessions, login.publicBaseUrl, ready);
}

/**
 * Mounts the Bull dashboard, the operators' console for deliveries. It reads through the producer
 * queue, whose Redis client fails fast, and its Retry and Promote buttons act through
 * DashboardDeliveries (see DeliveryBoardAdapter).
 */
export function mountQueueDashboard(app: INestApplication): void {
  const config = app.get<AppConfig>(APP_CONFIG);
  const queue = app.get<Queue>(DELIVERY_PRODUCER);
  const trail = app.get(AuditTrail);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(DASHBOARD_PATH);
  // @bull-board/express pins its own patch release of @bull-board/api; the adapter contract is the same.
  createBullBoard({
    queues: [new DeliveryBoardAdapter(queue, app.get(DashboardDeliveries))],
    serverAdapter: serverAdapter as unknown as BoardOptions['serverAdapter'],
    options: { uiConfig: { boardTitle: 'KYC deliveries' } },
  });
  const login = dashboardLogin(app, config, queue);
  if (login) app.use(LOGIN_PATH, login.routes());
  app.use(
    DASHBOARD_PATH,
    refuseCrossSiteWrites(),
    dashboardAuth(config.adminToken, app.get(AuthFailureLimit), app.get(OperatorCredentials), trail, login),
    requireRedis(queue),
    contractErrorBodies(queue),
    auditDashboardActions(trail),
    serverAdapter.getRouter(),
  );
}
