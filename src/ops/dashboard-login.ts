import { Logger } from '@nestjs/common';
import { parse as parseCookies, serialize as serializeCookie, type SerializeOptions } from 'cookie';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { ApiError } from 'src/common/api-error';
import { sendError } from 'src/http/all-exceptions.filter';
import type { Actor } from 'src/http/actor';
import { IssuerUnreachableError } from 'src/operators/oidc-verifier';
import { LoginRefusedError, type OidcLogin } from 'src/operators/oidc-login';
import { type DashboardSessions, LOGIN_TTL_MS, SESSION_TTL_MS } from 'src/ops/dashboard-sessions';

export const SESSION_COOKIE = 'kyc_admin_session';
const LOGIN_COOKIE = 'kyc_admin_login';
const SESSION_PATH = '/admin';
export const LOGIN_PATH = '/admin/auth';

const logger = new Logger('DashboardLogin');

export function cookieOf(req: Request, name: string): string | undefined {
  return parseCookies(req.headers.cookie ?? '')[name];
}

/**
 * The dashboard's OIDC login for browsers: a page asked for without a credential redirects to the
 * issuer; `/admin/auth/callback` signs the operator in; `/admin/auth/logout` signs them out.
 */
export class DashboardLogin {
  private readonly secure: boolean;

  constructor(
    private readonly login: OidcLogin,
    private readonly sessions: DashboardSessions,
    publicBaseUrl: string,
    private readonly redisReady: () => boolean,
  ) {
    this.secure = publicBaseUrl.startsWith('https:');
  }

  /** The operator of the request's session cookie, or null (none, expired, or signed out). */
  async sessionActor(req: Request): Promise<Actor | null> {
    const cookie = cookieOf(req, SESSION_COOKIE);
    return cookie ? this.sessions.actorOf(cookie) : null;
  }

  /** Sends the browser to the issuer's login; the page it asked for is where it comes back. */
  async redirectToIssuer(req: Request, res: Response): Promise<void> {
    const { url, transaction } = await this.login.start(req.originalUrl);
    const id = await this.sessions.beginLogin(transaction);
    res.setHeader('Set-Cookie', this.cookie(LOGIN_COOKIE, id, LOGIN_PATH, LOGIN_TTL_MS));
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(302, url);
  }

  routes(): Router {
    const router = Router();
    router.get(
      '/callback',
      (req, res, next) => void this.callback(req, res).catch((e) => this.fail(req, res, next, e)),
    );
    router.get('/logout', (req, res, next) => void this.logout(req, res).catch((e) => this.fail(req, res, next, e)));
    return router;
  }

  private async callback(req: Request, res: Response): Promise<void> {
    const loginId = cookieOf(req, LOGIN_COOKIE);
    // The pending login is used up by its first callback, whatever the outcome.
    const transaction = loginId ? await this.sessions.takeLogin(loginId) : null;
    res.setHeader('Cache-Control', 'no-store');
    res.append('Set-Cookie', this.cookie(LOGIN_COOKIE, '', LOGIN_PATH, 0));
    if (!transaction) throw new LoginRefusedError('no login in progress in this browser');
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?') + 1) : '';
    const actor = await this.login.finish(query, transaction);
    const sessionId = await this.sessions.open(actor);
    logger.log({ operator: actor.id, roles: actor.roles }, 'operator signed in to the dashboard');
    res.append('Set-Cookie', this.cookie(SESSION_COOKIE, sessionId, SESSION_PATH, SESSION_TTL_MS));
    res.redirect(302, transaction.returnTo);
  }

  private async logout(req: Request, res: Response): Promise<void> {
    const cookie = cookieOf(req, SESSION_COOKIE);
    if (cookie) await this.sessions.close(cookie);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Set-Cookie', this.cookie(SESSION_COOKIE, '', SESSION_PATH, 0));
    res
      .status(200)
      .type('html')
      .send(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed out</title></head>' +
          '<body><p>You are signed out of the KYC deliveries dashboard.</p>' +
          '<p><a href="/admin/queues">Sign in again</a></p></body></html>',
      );
  }

  private cookie(name: string, value: string, path: string, maxAgeMs: number): string {
    const options: SerializeOptions = {
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      path,
      maxAge: Math.floor(maxAgeMs / 1000),
    };
    return serializeCookie(name, value, maxAgeMs === 0 ? { ...options, expires: new Date(0) } : options);
  }

  /**
   * A refused login is 401 with the one body; an unreachable issuer, or Redis (which holds logins
   * and sessions) down, 503; anything else goes on to the error handler.
   */
  fail(req: Request, res: Response, next: NextFunction, error: unknown): void {
    if (error instanceof LoginRefusedError) {
      logger.warn({ reason: error.message }, 'dashboard login refused');
      return sendError(res, req, ApiError.unauthorized());
    }
    if (error instanceof IssuerUnreachableError) {
      logger.warn({ reason: error.message }, 'dashboard login: the identity provider cannot be reached');
      return sendError(res, req, ApiError.identityProviderUnavailable());
    }
    if (!this.redisReady()) return sendError(res, req, ApiError.dependencyUnavailable('redis'));
    next(error);
  }
}
