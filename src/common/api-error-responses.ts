import { applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiResponse } from '@nestjs/swagger';
import type { ExampleObject, HeaderObject, HeadersObject, ResponseObject } from '@nestjs/swagger';
import type { ApiError } from 'src/common/api-error';

export const ERROR_BODY_REF = '#/components/schemas/ErrorBody';
const EXAMPLE_REQUEST_ID = '0193a6f2-5d1a-7c4e-9a57-3f1f1e0b7c11';

const HEADER_SCHEMAS: Record<string, HeaderObject> = {
  Allow: { description: 'The methods this route serves', required: true, schema: { type: 'string', example: 'GET' } },
  'WWW-Authenticate': { required: true, schema: { type: 'string', enum: ['Bearer'] } },
  'Retry-After': {
    description: 'Seconds until a retry can succeed',
    required: true,
    schema: { type: 'integer', minimum: 0, example: 1 },
  },
};

/**
 * The OpenAPI response for one status: the contract's error body, one named example per error
 * (built with the same `ApiError` the code throws, so the example is what a client really gets),
 * and the headers those errors carry.
 */
export function errorResponse(errors: readonly ApiError[]): ResponseObject {
  const examples: Record<string, ExampleObject> = {};
  const headers: HeadersObject = {};
  for (const error of errors) {
    let key: string = error.code;
    for (let n = 2; key in examples; n += 1) key = `${error.code}_${n}`;
    examples[key] = { summary: error.message, value: error.toBody(EXAMPLE_REQUEST_ID) };
    for (const name of Object.keys(error.headers)) {
      const schema = HEADER_SCHEMAS[name];
      if (schema) headers[name] = schema;
    }
  }
  return {
    description: [...new Set(errors.map((error) => error.code))].join(' or '),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: ERROR_BODY_REF }, examples } },
  };
}

/**
 * The errors a route itself can answer (its own validation, 404 of its resource, 409 of its
 * state), each a realistic example; the OpenAPI builder adds the statuses every route shares.
 */
export function ApiErrors(...errors: ApiError[]): MethodDecorator {
  const byStatus = new Map<number, ApiError[]>();
  for (const error of errors) byStatus.set(error.status, [...(byStatus.get(error.status) ?? []), error]);
  return applyDecorators(
    ...[...byStatus].map(([status, group]) => ApiResponse({ status, ...errorResponse(group) })),
  ) as MethodDecorator;
}

/** The operation extension naming a limit of the route's own; the OpenAPI builder reads and removes it. */
export const LIMITED_BY = 'x-limited-by';

/** A limit of the route's own, named by its feature: its 429 is declared only while the operator has the limit on. */
export function ApiLimitedBy(limit: string): MethodDecorator {
  return ApiExtension(LIMITED_BY, limit) as MethodDecorator;
}
