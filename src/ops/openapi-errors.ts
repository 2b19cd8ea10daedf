import { ERROR_CODES, type ErrorCode } from 'src/common/api-error';
import { MAX_LIMIT } from 'src/common/pagination';

/** The contract's error body, shared by every non-2xx response in the OpenAPI document. */
export const ERROR_BODY_SCHEMA = {
  type: 'object' as const,
  required: ['error'],
  properties: {
    error: {
      type: 'object' as const,
      required: ['code', 'message', 'details', 'request_id'],
      properties: {
        code: {
          type: 'string' as const,
          enum: ERROR_CODES,
        },
        message: { type: 'string' as const },
        details: {
          type: 'array' as const,
          items: {
            type: 'object' as const,
            required: ['field', 'issue'],
            properties: { field: { type: 'string' as const }, issue: { type: 'string' as const } },
          },
        },
        request_id: { type: 'string' as const },
      },
    },
  },
  example: {
    error: {
      code: 'validation_failed',
      message: `limit must not be greater than ${MAX_LIMIT}`,
      details: [{ field: 'limit', issue: `must not be greater than ${MAX_LIMIT}` }],
      request_id: '9b1c2f0e-5d1a-4c4e-9a57-3f1f1e0b7c11',
    },
  },
};

export const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': {
    description: 'Requests allowed per minute for this account (RATE_LIMIT_PER_MINUTE)',
    schema: { type: 'integer' as const },
  },
  'RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer' as const } },
  'RateLimit-Reset': { description: 'Seconds until the current window ends', schema: { type: 'integer' as const } },
};

export const STATUS_CODES: Record<number, string> = {
  400: 'validation_failed or invalid_cursor',
  401: 'unauthorized: credential missing, malformed, unknown, expired or of the wrong kind',
  404: 'not_found: no such resource for this caller',
  409: 'invalid_transition or version_conflict',
  413: 'payload_too_large: body over 100 KB',
  415: 'unsupported_media_type: body is not application/json',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'service_unavailable: a dependency the route needs is down',
};

const EXAMPLES: Record<number, [ErrorCode, string, { field: string; issue: string }[]][]> = {
  400: [
    [
      'validation_failed',
      `limit must not be greater than ${MAX_LIMIT}`,
      [{ field: 'limit', issue: `must not be greater than ${MAX_LIMIT}` }],
    ],
    ['invalid_cursor', 'cursor is invalid', []],
  ],
  401: [['unauthorized', 'Missing or invalid credentials', []]],
  404: [['not_found', 'No such verification', []]],
  409: [
    ['invalid_transition', 'Cannot move from approved to processing', []],
    ['version_conflict', 'expected_version 2 does not match the current version 3', []],
  ],
  413: [['payload_too_large', 'Request body must not exceed 100 KB', []]],
  415: [['unsupported_media_type', 'Request body must be application/json', []]],
  429: [['rate_limited', 'Rate limit of 1200 requests per minute exceeded', []]],
  500: [['internal_error', 'Internal server error', []]],
  503: [['service_unavailable', 'Not ready: redis down', [{ field: 'redis', issue: 'down' }]]],
};

export function errorExamples(status: number): Record<string, { value: unknown }> {
  const examples: Record<string, { value: unknown }> = {};
  for (const [code, message, details] of EXAMPLES[status] ?? []) {
    examples[code] = {
      value: { error: { code, message, details, request_id: '9b1c2f0e-5d1a-4c4e-9a57-3f1f1e0b7c11' } },
    };
  }
  return examples;
}
