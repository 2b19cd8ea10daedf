import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AccountsService } from 'src/accounts/accounts.service';
import { AuthFailureLimit } from 'src/auth/auth-failure-limit';
import { bearerToken, tokensEqual } from 'src/auth/bearer';
import { clientAccountId } from 'src/auth/client-credential';
import { ApiError } from 'src/common/api-error';
import { CREDENTIAL_KIND, type ClientRequest, type CredentialKind } from 'src/http/credentials';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

/**
 * The global guard behind `@RequiresCredential`: a client route takes one of the account's active
 * webhook secrets (and learns the account), the internal and admin routes their static token,
 * compared in constant time; their failures count towards AUTH_FAILURE_LIMIT_PER_MINUTE (the public
 * API's are counted by its own limiter). Routes that declare no credential (health, metrics) pass.
 */
@Injectable()
export class CredentialGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly accounts: AccountsService,
    private readonly authFailures: AuthFailureLimit,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const kind = this.reflector.getAllAndOverride<CredentialKind | undefined>(CREDENTIAL_KIND, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (kind === undefined) return true;
    const req = context.switchToHttp().getRequest<ClientRequest>();
    if (kind === 'client') {
      const accountId = await clientAccountId(req, this.accounts);
      if (!accountId) throw ApiError.unauthorized();
      req.accountId = accountId;
      return true;
    }
    const token = bearerToken(req);
    const expected = kind === 'admin' ? this.config.adminToken : this.config.internalApiToken;
    if (token && tokensEqual(token, expected)) return true;
    throw await this.authFailures.refusal(req, ApiError.unauthorized());
  }
}
