import type { HeaderObject, SchemaObject } from '@nestjs/swagger';
import { authFailuresRefused } from 'src/auth/auth-failure-limit';
import { requestsRefused } from 'src/auth/public-rate-limiter';
import { ApiError, ERROR_CODES } from 'src/common/api-error';
import { MAX_LIMIT } from 'src/common/pagination';

/** The contract's error body, shared by every non-2xx response in the OpenAPI document. */
export const ERROR_BODY_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details', 'request_id'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', enum: ERROR_CODES },
        message: { type: 'string' },
        details: {
          type: 'array',
          items: {
            type: 'object',
            required: ['field', 'issue'],
            additionalProperties: false,
            properties: { field: { type: 'string' }, issue: { type: 'string' } },
          },
        },
        request_id: { type: 'string', description: 'The x-request-id of the response' },
      },
    },
  },
  example: {
    error: {
      code: 'validation_failed',
      message: `limit must not be greater than ${MAX_LIMIT}`,
      details: [{ field: 'limit', issue: `must not be greater than ${MAX_LIMIT}` }],
      request_id: '0193a6f2-5d1a-7c4e-9a57-3f1f1e0b7c11',
    },
  },
};

/** Headers of every response (x-request-id) and of every public response (RateLimit-*). */
export const RESPONSE_HEADERS: Record<string, HeaderObject> = {
  RequestId: {
    description:
      "The request's id: the caller's x-request-id when it is 1-128 of [A-Za-z0-9._-], otherwise a new one. " +
      'Every log line of the request carries it.',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._-]+$' },
  },
  RateLimitLimit: {
    description: 'Requests allowed per minute for this account (RATE_LIMIT_PER_MINUTE)',
    required: true,
    schema: { type: 'integer', minimum: 0, example: 1200 },
  },
  RateLimitRemaining: {
    description: 'Requests left in the current window',
    required: true,
    schema: { type: 'integer', minimum: 0, example: 1199 },
  },
  RateLimitReset: {
    description: 'Seconds until the current window ends',
    required: true,
    schema: { type: 'integer', minimum: 0, example: 60 },
  },
};

export const REQUEST_ID_HEADERS = { 'x-request-id': { $ref: '#/components/headers/RequestId' } };
export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
};

export type RouteFamily = 'public' | 'internal' | 'admin' | 'ops';

/** The limits a family's routes share; 0 is off and declares no 429. */
export interface SharedLimits {
  /** RATE_LIMIT_PER_MINUTE, on the public API. */
  requestsPerMinute: number;
  /** AUTH_FAILURE_LIMIT_PER_MINUTE, on the internal and admin APIs. */
  authFailuresPerMinute: number;
}

/**
 * The errors every route of a family can answer whatever its own logic: the HTTP edge's (bad
 * JSON, body size and type, another method), authentication, the rate limit, a database outage.
 * A route's own errors (its validation, 404, 409) are declared on the route with `@ApiErrors`.
 */
export function sharedErrors(
  family: RouteFamily,
  method: string,
  pathMethods: readonly string[],
  limits: SharedLimits,
): ApiError[] {
  const other = ['DELETE', 'PUT', 'PATCH', 'POST', 'GET'].find((m) => !pathMethods.includes(m)) ?? 'TRACE';
  const errors = [
    method === 'GET'
      ? ApiError.validation('expand', 'is not allowed')
      : new ApiError('validation_failed', 'Request body is not valid JSON', [
          { field: 'body', issue: 'is not valid JSON' },
        ]),
    new ApiError('method_not_allowed', `Method ${other} is not allowed on this route`, [], {
      Allow: [...pathMethods].sort().join(', '),
    }),
    ApiError.requestTimeout(),
    ApiError.payloadTooLarge(),
    ApiError.headersTooLarge(),
    ApiError.notJsonBody(),
    ApiError.encodedBody(),
    new ApiError('internal_error', 'Internal server error'),
  ];
  if (family === 'ops') return errors;
  errors.push(ApiError.unauthorized(), ApiError.databaseUnavailable());
  if (family === 'admin') errors.push(ApiError.identityProviderUnavailable());
  if (family === 'public' && limits.requestsPerMinute > 0) {
    errors.push(requestsRefused(limits.requestsPerMinute, '12'));
  }
  if (family !== 'public' && limits.authFailuresPerMinute > 0) {
    errors.push(authFailuresRefused(limits.authFailuresPerMinute, '12'));
  }
  return errors;
}
