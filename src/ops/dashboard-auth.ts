import { Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { AuditTrail } from 'src/audit/audit-trail.service';
import { AuthFailureLimit } from 'src/auth/auth-failure-limit';
import { bearerToken, tokensEqual } from 'src/auth/bearer';
import { OperatorCredentials } from 'src/auth/operator-credential';
import { rolesAllow, type Permission } from 'src/auth/permissions';
import { ApiError } from 'src/common/api-error';
import { isDatabaseUnavailable } from 'src/database/dependency-errors';
import { sendError } from 'src/http/all-exceptions.filter';
import { BREAK_GLASS } from 'src/http/actor';
import type { ClientRequest } from 'src/http/credentials';
import type { Actor } from 'src/http/actor';
import type { DashboardLogin } from 'src/ops/dashboard-login';

const logger = new Logger('QueueDashboard');
const READS = new Set(['GET', 'HEAD']);

/** Reading the dashboard needs accounts:read; its actions (retry, promote, clean, pause, resume) accounts:write. */
export function dashboardPermission(method: string): Permission {
  return READS.has(method.toUpperCase()) ? 'accounts:read' : 'accounts:write';
}

function basicIsAdmin(header: string | undefined, adminToken: string): boolean {
  const match = /^basic +([A-Za-z0-9+/=]+) *$/i.exec(header ?? '');
  const decoded = match ? Buffer.from(match[1], 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const userOk = tokensEqual(colon >= 0 ? decoded.slice(0, colon) : '', 'admin');
  const passwordOk = tokensEqual(colon >= 0 ? decoded.slice(colon + 1) : '', adminToken);
  return match !== null && userOk && passwordOk;
}

/** A page of the dashboard (not its JSON API): what a browser without a session is sent to log in for. */
function isPage(req: Request): boolean {
  return READS.has(req.method.toUpperCase()) && !req.path.startsWith('/api/');
}

/**
 * Who may use the queue dashboard: HTTP Basic with user `admin` and ADMIN_TOKEN (break-glass,
 * compared in constant time), an operator credential as Bearer (an operator key or an OIDC access
 * token), or, with the login configured, the operator's session cookie. The operator's roles must
 * grant the request's permission (403 `forbidden` otherwise, before anything runs). Without any of
 * them a page redirects to the issuer's login (when configured) and anything else is 401 with a
 * Basic challenge; failures count towards AUTH_FAILURE_LIMIT_PER_MINUTE like the admin API's.
 */
export function dashboardAuth(
  adminToken: string,
  failures: Pick<AuthFailureLimit, 'refusal'>,
  operators: Pick<OperatorCredentials, 'authenticate'>,
  trail: Pick<AuditTrail, 'breakGlassUsed' | 'recordDenied'>,
  login: DashboardLogin | null,
) {
  const refuse = (req: Request, res: Response, next: NextFunction): void => {
    const unauthorized = new ApiError('unauthorized', 'Missing or invalid credentials', [], {
      'WWW-Authenticate': 'Basic',
    });
    failures.refusal(req, unauthorized).then((error) => sendError(res, req, error), next);
  };
  const admit = (actor: Actor, req: ClientRequest, res: Response, next: NextFunction): void => {
    req.actor = actor;
    const permission = dashboardPermission(req.method);
    if (rolesAllow(actor.roles, permission)) return next();
    // A refusal is recorded (auth.denied) before its 403.
    trail.recordDenied(req).then(() => sendError(res, req, ApiError.forbidden(permission)), next);
  };
  const bySession = (req: ClientRequest, res: Response, next: NextFunction, dashboard: DashboardLogin): void => {
    dashboard.sessionActor(req).then(
      (actor) => {
        if (actor) return admit(actor, req, res, next);
        if (!isPage(req)) return refuse(req, res, next);
        dashboard.redirectToIssuer(req, res).catch((error: unknown) => dashboard.fail(req, res, next, error));
      },
      (error: unknown) => dashboard.fail(req, res, next, error),
    );
  };
  return (req: ClientRequest, res: Response, next: NextFunction): void => {
    if (basicIsAdmin(req.headers.authorization, adminToken)) {
      req.actor = BREAK_GLASS;
      trail.breakGlassUsed(req).then(() => next(), next);
      return;
    }
    const token = bearerToken(req);
    // A credential that is there and wrong is refused; only a request without one may use a session.
    if (token === null && (!login || req.headers.authorization !== undefined)) return refuse(req, res, next);
    if (token === null) return bySession(req, res, next, login as DashboardLogin);
    operators.authenticate(token).then(
      (actor) => {
        // ADMIN_TOKEN opens the dashboard as Basic `admin:<token>` only, never as Bearer.
        if (!actor || actor.type === 'break_glass') return refuse(req, res, next);
        admit(actor, req, res, next);
      },
      (error: unknown) => {
        if (error instanceof ApiError) return sendError(res, req, error);
        if (isDatabaseUnavailable(error)) return sendError(res, req, ApiError.databaseUnavailable());
        logger.error({ error: (error as Error).message }, 'queue dashboard: credential check failed');
        next(error);
      },
    );
  };
}
