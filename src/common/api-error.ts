// Plain numbers keep this module free of Nest so the pure modules that use it stay unit-testable.
const STATUS = {
  validation_failed: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  invalid_transition: 409,
  version_conflict: 409,
  endpoint_disabled: 409,
  legal_hold: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

/** How an endpoint_disabled message starts: the queue dashboard's answer is told apart by it. */
export const ENDPOINT_DISABLED = 'The webhook endpoint is disabled';

/** The contract's error codes, each with its HTTP status. */
export type ErrorCode = keyof typeof STATUS;
export const ERROR_CODES = Object.keys(STATUS) as ErrorCode[];

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

/** A failure the client is told about: a stable code, a readable message, per-field details. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
    status?: number,
  ) {
    super(message);
    this.status = status ?? STATUS[code];
  }

  static validation(field: string, issue: string): ApiError {
    return new ApiError('validation_failed', `${field} ${issue}`, [{ field, issue }]);
  }

  static notFound(what = 'resource'): ApiError {
    return new ApiError('not_found', `No such ${what}`);
  }

  /** A delivery asked for while the account's webhook endpoint is disabled. */
  static endpointDisabled(reason: string): ApiError {
    return new ApiError(
      'endpoint_disabled',
      `${ENDPOINT_DISABLED} (${reason}): enable it first (PATCH /api/v1/public/kyc/webhook-endpoint)`,
    );
  }

  /** A redaction refused while a legal hold is active; the message says until when. */
  static legalHold(until: Date | null): ApiError {
    const when = until ? `until ${until.toISOString()}` : 'until it is released';
    return new ApiError('legal_hold', `The verification is under a legal hold ${when}; nothing was changed`);
  }

  static unauthorized(): ApiError {
    return new ApiError('unauthorized', 'Missing or invalid credentials', [], { 'WWW-Authenticate': 'Bearer' });
  }

  /** A valid operator credential whose roles lack the permission the route needs; nothing changed. */
  static forbidden(permission: string): ApiError {
    return new ApiError('forbidden', `Your role does not grant the permission this request needs (${permission})`, [
      { field: 'role', issue: `lacks the permission ${permission}` },
    ]);
  }

  /** A state-changing queue dashboard request sent by a page of another origin (cross-site request forgery). */
  static crossSiteRequest(): ApiError {
    return new ApiError(
      'forbidden',
      'The queue dashboard takes state-changing requests only from its own pages, not from another origin or site',
    );
  }

  /** Node's own early answers, before a request reaches Express (src/http/http-server-limits.ts). */
  static requestTimeout(): ApiError {
    return new ApiError('request_timeout', 'The request was not received in time');
  }

  static headersTooLarge(): ApiError {
    return new ApiError('payload_too_large', 'Request headers are too large', [], {}, 431);
  }

  static payloadTooLarge(): ApiError {
    return new ApiError('payload_too_large', 'Request body must not exceed 100 KB');
  }

  static notJsonBody(): ApiError {
    return new ApiError('unsupported_media_type', 'Request body must be application/json');
  }

  /** Bodies are never compressed: refused before the body parser would inflate them. */
  static encodedBody(): ApiError {
    return new ApiError('unsupported_media_type', 'Content-Encoding must be identity: send the body uncompressed', [
      { field: 'content-encoding', issue: 'must be identity' },
    ]);
  }

  /** A dependency unreachable (PostgreSQL for the API, Redis for the queue dashboard): 503 at once rather than hanging. */
  static dependencyUnavailable(dependency: 'postgres' | 'redis'): ApiError {
    return new ApiError(
      'service_unavailable',
      'A dependency this route needs is unavailable; retry later',
      [{ field: dependency, issue: 'down' }],
      { 'Retry-After': '1' },
    );
  }

  /** A write whose commit could not be confirmed or ruled out: the primary was out of reach until the deadline. */
  static commitUnknown(): ApiError {
    return new ApiError(
      'service_unavailable',
      'The database went away while this change was committing, and did not come back in time to tell whether it was committed: read the resource before retrying',
      [{ field: 'commit', issue: 'unknown' }],
      { 'Retry-After': '1' },
    );
  }

  /** An OIDC access token while the issuer cannot be reached and no JWKS is cached; other credentials keep working. */
  static identityProviderUnavailable(): ApiError {
    return new ApiError(
      'service_unavailable',
      'The identity provider cannot be reached to verify this token; retry later',
      [{ field: 'oidc_issuer', issue: 'unreachable' }],
      { 'Retry-After': '5' },
    );
  }

  static databaseUnavailable(): ApiError {
    return ApiError.dependencyUnavailable('postgres');
  }

  toBody(requestId: string): ErrorBody {
    return { error: { code: this.code, message: this.message, details: this.details, request_id: requestId } };
  }
}
