import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import type { Request } from 'express';
import { ApiError } from 'src/common/api-error';

// Nest's RouteParamtypes values (not exported from the package root in Nest 12).
const BODY = 3;
const QUERY = 4;

interface DeclaredInputs {
  query: boolean;
  body: boolean;
}

function declaredInputs(context: ExecutionContext): DeclaredInputs {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), context.getHandler().name) ??
    {}) as Record<string, unknown>;
  const types = new Set(Object.keys(args).map((key) => key.split(':')[0]));
  return { query: types.has(String(QUERY)), body: types.has(String(BODY)) };
}

/**
 * Routes that take no query string or no body still refuse unknown input: the ValidationPipe only
 * sees parameters a handler declares, so this covers the ones it does not.
 *
 * A guard rather than a global interceptor: every controller lists it in its `@UseGuards`, so it
 * runs after the global credential guard and a caller without credentials gets the same 401
 * whatever unknown fields it sends (malformed requests are refused earlier still, by the HTTP
 * pipeline's middleware). Being a guard also keeps Nest's per-request interceptor chain (rxjs,
 * AsyncResource) out of every request. test/undeclared-input.e2e-spec.ts sends an unknown query
 * parameter to every route, so a controller that forgets it fails there.
 */
@Injectable()
export class UndeclaredInputGuard implements CanActivate {
  /** Per handler: what it declares is fixed once the app is built. */
  private readonly declared = new WeakMap<object, DeclaredInputs>();

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    const queryKeys = Object.keys(req.query ?? {});
    const body: unknown = req.body;
    const bodyKeys = body && typeof body === 'object' ? Object.keys(body) : [];
    if (queryKeys.length === 0 && bodyKeys.length === 0) return true;
    const declared = this.declaredBy(context);
    if (queryKeys.length > 0 && !declared.query) throw ApiError.validation(queryKeys[0], 'is not allowed');
    if (bodyKeys.length > 0 && !declared.body) throw ApiError.validation(bodyKeys[0], 'is not allowed');
    return true;
  }

  private declaredBy(context: ExecutionContext): DeclaredInputs {
    const handler = context.getHandler();
    let declared = this.declared.get(handler);
    if (!declared) {
      declared = declaredInputs(context);
      this.declared.set(handler, declared);
    }
    return declared;
  }
}
