import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { ApiError, ErrorCode } from 'src/common/api-error';
import { isDatabaseUnavailable } from 'src/database/dependency-errors';
import { loggedPath } from 'src/common/logging/root-logger';
import { requestIdOf } from 'src/http/request-id';
import { allowedMethods } from 'src/http/route-table';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'validation_failed',
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  503: 'service_unavailable',
};

interface BodyParserError {
  type?: string;
  status?: number;
  statusCode?: number;
}

/** Every error, framework ones included, leaves as the contract's error body. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    this.handle(exception, ctx.getRequest<Request>(), ctx.getResponse<Response>());
  }

  handle(exception: unknown, req: Request, res: Response): void {
    const error = this.toApiError(exception, req);
    if (error.code === 'service_unavailable' && !(exception instanceof ApiError)) {
      this.logger.warn({ err: exception, method: req.method, path: loggedPath(req.path) }, 'dependency unavailable');
    } else if (error.status >= 500 && error.code === 'internal_error') {
      this.logger.error({ err: exception, method: req.method, path: loggedPath(req.path) }, 'unhandled error');
    }
    sendError(res, req, error);
  }

  private toApiError(exception: unknown, req: Request): ApiError {
    if (exception instanceof ApiError) return exception;
    if (isDatabaseUnavailable(exception)) {
      return ApiError.databaseUnavailable();
    }
    const parserError = exception as BodyParserError;
    if (parserError?.type === 'entity.too.large') {
      return ApiError.payloadTooLarge();
    }
    if (parserError?.type === 'entity.parse.failed') {
      return new ApiError('validation_failed', 'Request body is not valid JSON', [
        { field: 'body', issue: 'is not valid JSON' },
      ]);
    }
    if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported') {
      return new ApiError('unsupported_media_type', 'Request body must be UTF-8 JSON');
    }
    if (typeof parserError?.type === 'string' && (parserError.status ?? 500) < 500) {
      return new ApiError('validation_failed', 'Request body could not be read');
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        const methods = allowedMethods(this.adapterHost.httpAdapter.getInstance(), req.path);
        if (methods.length > 0) {
          return new ApiError('method_not_allowed', `Method ${req.method} is not allowed on this route`, [], {
            Allow: methods.join(', '),
          });
        }
        return new ApiError('not_found', `No route ${req.method} ${req.path}`);
      }
      return errorForStatus(status, exception.message);
    }
    return new ApiError('internal_error', 'Internal server error');
  }
}

/** The contract's error for a bare HTTP status; a 5xx never carries the original message. */
export function errorForStatus(status: number, message: string): ApiError {
  const code = CODE_BY_STATUS[status] ?? (status < 500 ? 'validation_failed' : 'internal_error');
  return new ApiError(code, status < 500 ? message : 'Internal server error');
}

export function sendError(res: Response, req: Request, error: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  res.status(error.status).json(error.toBody(requestIdOf(req, res)));
}
