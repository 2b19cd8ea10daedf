import { HttpStatus } from '@nestjs/common';

export type ErrorCode =
  | 'validation_failed'
  | 'invalid_cursor'
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  | 'invalid_transition'
  | 'version_conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable';

export interface ErrorDetail {
  field: string;
  issue: string;
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    details: ErrorDetail[];
    request_id: string;
  };
}

const STATUS: Record<ErrorCode, number> = {
  validation_failed: HttpStatus.BAD_REQUEST,
  invalid_cursor: HttpStatus.BAD_REQUEST,
  unauthorized: HttpStatus.UNAUTHORIZED,
  not_found: HttpStatus.NOT_FOUND,
  method_not_allowed: HttpStatus.METHOD_NOT_ALLOWED,
  invalid_transition: HttpStatus.CONFLICT,
  version_conflict: HttpStatus.CONFLICT,
  payload_too_large: HttpStatus.PAYLOAD_TOO_LARGE,
  unsupported_media_type: HttpStatus.UNSUPPORTED_MEDIA_TYPE,
  rate_limited: HttpStatus.TOO_MANY_REQUESTS,
  internal_error: HttpStatus.INTERNAL_SERVER_ERROR,
  service_unavailable: HttpStatus.SERVICE_UNAVAILABLE,
};

/** A failure the client is told about: a stable code, a readable message, per-field details. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = STATUS[code];
  }

  static validation(field: string, issue: string): ApiError {
    return new ApiError('validation_failed', `${field} ${issue}`, [{ field, issue }]);
  }

  static notFound(what = 'resource'): ApiError {
    return new ApiError('not_found', `No such ${what}`);
  }

  static unauthorized(): ApiError {
    return new ApiError('unauthorized', 'Missing or invalid credentials', [], { 'WWW-Authenticate': 'Bearer' });
  }

  toBody(requestId: string): ErrorBody {
    return { error: { code: this.code, message: this.message, details: this.details, request_id: requestId } };
  }
}
