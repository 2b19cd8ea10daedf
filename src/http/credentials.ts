import { ExecutionContext, SetMetadata, applyDecorators, createParamDecorator } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Actor } from 'src/http/actor';
import { ApiError } from 'src/common/api-error';

/** The three kinds of Bearer credential: a client's webhook secret, the internal and the admin token. */
export type CredentialKind = 'client' | 'internal' | 'admin';

export const CREDENTIAL_KIND = 'kyc:credential-kind';

/**
 * The credential every route of a controller requires (and its OpenAPI security scheme). The auth
 * feature's global guard enforces it before any guard the controller lists, so a caller without
 * it gets the same 401 whatever else is wrong with the request.
 */
export function RequiresCredential(kind: CredentialKind): ClassDecorator & MethodDecorator {
  return applyDecorators(SetMetadata(CREDENTIAL_KIND, kind), ApiBearerAuth(kind));
}

export interface ClientRequest extends Request {
  /** Set by the credential guard on a request authenticated with a client's secret. */
  accountId?: string;
  /** Set by the credential guard on every request with a valid client or admin credential. */
  actor?: Actor;
}

/** The authenticated client's account id. */
export const CurrentAccountId = createParamDecorator((_: unknown, context: ExecutionContext): string => {
  const accountId = context.switchToHttp().getRequest<ClientRequest>().accountId;
  if (!accountId) throw ApiError.unauthorized();
  return accountId;
});
