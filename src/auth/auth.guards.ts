import { CanActivate, ExecutionContext, Inject, Injectable, createParamDecorator } from '@nestjs/common';
import type { Request } from 'express';
import { AccountsService } from 'src/accounts/accounts.service';
import { bearerToken, tokensEqual } from 'src/auth/bearer';
import { clientAccountId } from 'src/auth/client-credential';
import { ApiError } from 'src/common/api-error';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';

export interface ClientRequest extends Request {
  accountId?: string;
}

/** Public API: the Bearer token is one of the account's active webhook secrets. */
@Injectable()
export class ClientAuthGuard implements CanActivate {
  constructor(private readonly accounts: AccountsService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<ClientRequest>();
    const accountId = await clientAccountId(req, this.accounts);
    if (!accountId) throw ApiError.unauthorized();
    req.accountId = accountId;
    return true;
  }
}

abstract class StaticTokenGuard implements CanActivate {
  protected abstract expected(): string;

  canActivate(context: ExecutionContext): boolean {
    const token = bearerToken(context.switchToHttp().getRequest<Request>());
    if (!token || !tokensEqual(token, this.expected())) throw ApiError.unauthorized();
    return true;
  }
}

@Injectable()
export class InternalAuthGuard extends StaticTokenGuard {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  protected expected(): string {
    return this.config.internalApiToken;
  }
}

@Injectable()
export class AdminAuthGuard extends StaticTokenGuard {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  protected expected(): string {
    return this.config.adminToken;
  }
}

/** The authenticated client's account id (set by ClientAuthGuard). */
export const CurrentAccountId = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const accountId = context.switchToHttp().getRequest<ClientRequest>().accountId;
  if (!accountId) throw ApiError.unauthorized();
  return accountId;
});
