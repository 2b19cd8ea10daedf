import { Inject, Injectable } from '@nestjs/common';
import { tokensEqual } from 'src/auth/bearer';
import type { AppConfig } from 'src/config/app-config';
import { APP_CONFIG } from 'src/config/config.module';
import { BREAK_GLASS, type Actor } from 'src/http/actor';
import { isOperatorKeyToken } from 'src/operators/operator-key';
import { OperatorKeysService } from 'src/operators/operator-keys.service';
import { OIDC_VERIFIER } from 'src/operators/operators.module';
import { IssuerUnreachableError, type OidcVerifier } from 'src/operators/oidc-verifier';
import { ApiError } from 'src/common/api-error';

/**
 * The operator a Bearer token proves, for the admin API and the queue dashboard: ADMIN_TOKEN
 * (compared in constant time) is break-glass; a `kyc_op_` token is an operator key; anything else
 * is an OIDC access token when an issuer is configured. Null when it proves no one; 503 for an OIDC
 * token while the issuer cannot be reached and none of its keys is cached.
 */
@Injectable()
export class OperatorCredentials {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly keys: OperatorKeysService,
    @Inject(OIDC_VERIFIER) private readonly oidc: OidcVerifier | null,
  ) {}

  async authenticate(token: string): Promise<Actor | null> {
    if (tokensEqual(token, this.config.adminToken)) return BREAK_GLASS;
    if (isOperatorKeyToken(token)) return this.keys.authenticate(token);
    if (!this.oidc) return null;
    try {
      return await this.oidc.verify(token);
    } catch (error) {
      if (error instanceof IssuerUnreachableError) throw ApiError.identityProviderUnavailable();
      throw error;
    }
  }
}
