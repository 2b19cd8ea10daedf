import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AccountsService } from 'src/accounts/accounts.service';
import { clientActor, type Actor } from 'src/http/actor';
import { AuditTrail } from 'src/audit/audit-trail.service';
import { AuthFailureLimit } from 'src/auth/auth-failure-limit';
import { bearerToken, tokensEqual } from 'src/auth/bearer';
import { clientAccountId } from 'src/auth/client-credential';
import { OperatorCredentials } from 'src/auth/operator-credential';
import { REQUIRED_PERMISSION, rolesAllow, type Permission } from 'src/auth/permissions';
import { ApiError } from 'src/common/api-error';
import { CREDENTIAL_KIND, type ClientRequest, type CredentialKind } from 'src/http/credentials';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/**
 * The global guard behind `@RequiresCredential`: a client route takes one of the account's active
 * webhook secrets (and learns the account), the internal routes their static token, the admin
 * routes an operator credential, then the permission the route declares (`@RequiresPermission`;
 * 403 `forbidden` without it, before anything runs). Static tokens are compared in constant time;
 * failures count towards AUTH_FAILURE_LIMIT_PER_MINUTE (the public API's are counted by its own
 * limiter). Routes that declare no credential (health, metrics) pass.
 */
@Injectable()
export class CredentialGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly accounts: AccountsService,
    private readonly authFailures: AuthFailureLimit,
    private readonly operators: OperatorCredentials,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly trail: AuditTrail,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.declared<CredentialKind>(context, CREDENTIAL_KIND);
    if (kind === undefined) return true;
    const req = context.switchToHttp().getRequest<ClientRequest>();
    if (kind === 'client') {
      const accountId = await clientAccountId(req, this.accounts);
      if (!accountId) throw ApiError.unauthorized();
      req.accountId = accountId;
      req.actor = clientActor(accountId);
      return true;
    }
    const token = bearerToken(req);
    if (kind === 'internal') {
      if (token && tokensEqual(token, this.config.internalApiToken)) return true;
      throw await this.authFailures.refusal(req, ApiError.unauthorized());
    }
    const actor = token === null ? null : await this.operators.authenticate(token);
    if (!actor) throw await this.authFailures.refusal(req, ApiError.unauthorized());
    req.actor = actor;
    if (actor.type === 'break_glass') await this.trail.breakGlassUsed(req);
    await this.authorize(req, actor, this.declared<Permission>(context, REQUIRED_PERMISSION));
    return true;
  }

  /**
   * An admin route that declares no permission is open to break-glass only: a forgotten declaration
   * fails closed. A refusal is recorded in the audit trail (auth.denied, outcome denied) before the 403.
   */
  private async authorize(req: ClientRequest, actor: Actor, permission: Permission | undefined): Promise<void> {
    if (permission !== undefined && rolesAllow(actor.roles, permission)) return;
    if (permission === undefined && actor.type === 'break_glass') return;
    await this.trail.recordDenied(req);
    throw ApiError.forbidden(permission ?? 'undeclared');
  }

  private declared<T>(context: ExecutionContext, key: string): T | undefined {
    return this.reflector.getAllAndOverride<T | undefined>(key, [context.getHandler(), context.getClass()]);
  }
}
