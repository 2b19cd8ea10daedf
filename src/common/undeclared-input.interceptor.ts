import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import { ApiError } from 'src/common/api-error';

// Nest's RouteParamtypes values (not exported from the package root in Nest 12).
const BODY = 3;
const QUERY = 4;

function declares(context: ExecutionContext, type: number): boolean {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), context.getHandler().name) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => key.split(':')[0] === String(type));
}

/**
 * Routes that take no query string or no body still refuse unknown input: the ValidationPipe only
 * sees parameters a handler declares, so this covers the ones it does not.
 */
@Injectable()
export class UndeclaredInputInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const queryKeys = Object.keys(req.query ?? {});
    if (queryKeys.length > 0 && !declares(context, QUERY)) {
      throw ApiError.validation(queryKeys[0], 'is not allowed');
    }
    const body: unknown = req.body;
    const bodyKeys = body && typeof body === 'object' ? Object.keys(body) : [];
    if (bodyKeys.length > 0 && !declares(context, BODY)) {
      throw ApiError.validation(bodyKeys[0], 'is not allowed');
    }
    return next.handle();
  }
}
