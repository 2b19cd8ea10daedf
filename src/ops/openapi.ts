import type { INestApplication } from '@nestjs/common';
import {
  DocumentBuilder,
  OpenAPIObject,
  SwaggerModule,
  type OperationObject,
  type ReferenceObject,
  type ResponseObject,
} from '@nestjs/swagger';
import type { ApiError } from 'src/common/api-error';
import { errorResponse, ERROR_BODY_REF, LIMITED_BY } from 'src/common/api-error-responses';
import {
  ERROR_BODY_SCHEMA,
  RATE_LIMIT_HEADERS,
  REQUEST_ID_HEADERS,
  RESPONSE_HEADERS,
  RouteFamily,
  sharedErrors,
} from 'src/ops/openapi-errors';
import { inlineNullableReferences } from 'src/ops/openapi-references';
import { PERMISSION_EXTENSION, ROLES_EXTENSION } from 'src/auth/permissions';
import { REDELIVERIES_LIMIT, redeliveriesRefused } from 'src/webhooks/event-log/redelivery-limit';
import { TEST_EVENTS_LIMIT, testEventsRefused } from 'src/webhooks/event-log/test-event-limit';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const DESCRIPTION = `KYC verification lookup and signed webhook result delivery.

* **Public API** (\`/api/v1/public\`): \`Authorization: Bearer <webhook_secret>\` (scheme \`client\`).
  Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds);
  over the per-account limit the answer is 429 \`rate_limited\` with \`Retry-After\`. Requests without a
  valid credential are counted per client address, so 401 answers carry the headers too. Where the
  operator turned the limit off (\`RATE_LIMIT_PER_MINUTE=0\`), the operations below declare neither.
* **Internal API** (\`/api/v1/internal\`): \`Authorization: Bearer <INTERNAL_API_TOKEN>\` (scheme \`internal\`).
* **Admin API** (\`/api/v1/admin\`): an operator credential, \`Authorization: Bearer …\` (scheme \`admin\`):
  an operator key (\`kyc_op_…\`), an OIDC access token of the configured issuer, or \`ADMIN_TOKEN\`
  (break-glass, every permission). Each route needs one permission of the operator's roles; a valid
  credential without it is 403 \`forbidden\` and changes nothing.
  On the internal and admin APIs, failed credentials are counted per source address: over
  \`AUTH_FAILURE_LIMIT_PER_MINUTE\` a failed one is 429 \`rate_limited\` with \`Retry-After\` instead of
  401; a valid credential is never refused by it.
* **Operations** (\`/health/*\`, \`/metrics\`): no credential.

Every response carries \`x-request-id\` (the caller's value when it is 1–128 of \`[A-Za-z0-9._-]\`,
otherwise a new one). Every non-2xx response has the error body \`ErrorBody\`; each operation lists
every status it can answer. Unknown query parameters and body fields, and a query parameter given
twice, are 400. A method a path does not serve is 405 with \`Allow\`. Bodies are UTF-8 JSON of at most
100 KB, uncompressed (a \`Content-Encoding\` other than \`identity\` is 415). With PostgreSQL down, API
routes answer 503 \`service_unavailable\`.`;

const SUCCESS: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted: delivery is queued' };

const SCHEMES = {
  client: "The account's webhook secret, `whsec_` + base64 of 32 bytes. Opaque: not a JWT.",
  internal: 'INTERNAL_API_TOKEN, for the capture widget and the processing pipeline. Opaque: not a JWT.',
  admin:
    'An operator credential: an operator key (`kyc_op_` + base64url of 32 bytes), an OIDC access token of the ' +
    'configured issuer, or ADMIN_TOKEN (break-glass). Opaque to the caller.',
};

/** What the document depends on in this process's configuration. */
export interface OpenApiSettings {
  /** 0 turns the public rate limit off: no 429 and no RateLimit-* headers then. */
  rateLimitPerMinute: number;
  /** 0 turns the failed-credential limit off: no 429 on the internal and admin routes then. */
  authFailureLimitPerMinute: number;
  /** 0 turns the test-event limit off: no 429 of its own on that route then. */
  testEventsPerMinute: number;
  /** 0 turns the redelivery limit off: no 429 of its own on the redeliver routes then. */
  redeliveriesPerHour: number;
}

/** The OpenAPI 3.0.3 document of every route, exact enough that a generated client needs no casts. */
export function buildOpenApiDocument(app: INestApplication, settings: OpenApiSettings): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.0.3')
    .setTitle('KYC verification lookup and result delivery')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    .addServer('/', 'This service: paths are relative to the host that served this document');
  builder
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'whsec_', description: SCHEMES.client }, 'client')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: SCHEMES.internal },
      'internal',
    )
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: SCHEMES.admin }, 'admin');
  const document = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ErrorBody: ERROR_BODY_SCHEMA },
    headers: settings.rateLimitPerMinute > 0 ? RESPONSE_HEADERS : { RequestId: RESPONSE_HEADERS.RequestId },
  };
  document.info.license = { name: 'Proprietary' };
  for (const [path, item] of Object.entries(document.paths)) {
    const pathMethods = METHODS.filter((method) => item[method]).map((method) => method.toUpperCase());
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) completeOperation(path, method.toUpperCase(), pathMethods, operation, settings);
    }
  }
  inlineNullableReferences(document);
  return document;
}

function familyOf(path: string): RouteFamily {
  const match = /^\/api\/v1\/(public|internal|admin)\//.exec(path);
  return match ? (match[1] as RouteFamily) : 'ops';
}

function completeOperation(
  path: string,
  method: string,
  pathMethods: string[],
  operation: OperationObject,
  settings: OpenApiSettings,
): void {
  const family = familyOf(path);
  const rateLimited = family === 'public' && settings.rateLimitPerMinute > 0;
  if (family === 'ops') operation.security = [];
  const needs = operation as OperationObject & { [PERMISSION_EXTENSION]?: string; [ROLES_EXTENSION]?: string[] };
  if (needs[PERMISSION_EXTENSION]) {
    const roles = [...(needs[ROLES_EXTENSION] ?? [])].map((role) => `\`${role}\``).join(', ');
    const line = `Needs the permission \`${needs[PERMISSION_EXTENSION]}\`, which the roles ${roles} grant (or ADMIN_TOKEN).`;
    operation.description = operation.description ? `${operation.description}\n\n${line}` : line;
  }
  for (const parameter of operation.parameters ?? []) {
    if ('$ref' in parameter || parameter.in !== 'path') continue;
    parameter.schema = { type: 'string', format: 'uuid' };
    parameter.description ??= 'A UUID; anything else is 400 validation_failed';
  }
  const shared = new Map<number, ReturnType<typeof sharedErrors>>();
  const limits = {
    requestsPerMinute: settings.rateLimitPerMinute,
    authFailuresPerMinute: settings.authFailureLimitPerMinute,
  };
  for (const error of [...sharedErrors(family, method, pathMethods, limits), ...ownLimitErrors(operation, settings)]) {
    shared.set(error.status, [...(shared.get(error.status) ?? []), error]);
  }
  for (const [status, errors] of shared) {
    operation.responses[status] = mergeResponses(operation.responses[status], errorResponse(errors));
  }
  for (const [status, response] of Object.entries(operation.responses)) {
    if (!response || '$ref' in response) continue;
    response.description ||= SUCCESS[status] ?? status;
    response.headers = {
      ...REQUEST_ID_HEADERS,
      ...(rateLimited ? RATE_LIMIT_HEADERS : {}),
      ...response.headers,
    };
  }
  operation.responses = Object.fromEntries(
    Object.entries(operation.responses).sort(([a], [b]) => a.localeCompare(b)),
  ) as OperationObject['responses'];
}

function ownLimitErrors(operation: OperationObject, settings: OpenApiSettings): ApiError[] {
  const extensions = operation as OperationObject & { [LIMITED_BY]?: string };
  const limitedBy = extensions[LIMITED_BY];
  delete extensions[LIMITED_BY];
  if (limitedBy === TEST_EVENTS_LIMIT && settings.testEventsPerMinute > 0) {
    return [testEventsRefused(settings.testEventsPerMinute, '12')];
  }
  if (limitedBy === REDELIVERIES_LIMIT && settings.redeliveriesPerHour > 0) {
    return [redeliveriesRefused(settings.redeliveriesPerHour, '1800')];
  }
  return [];
}

/** A route's own errors come first; the shared ones join them under the same status. */
function mergeResponses(own: ResponseObject | ReferenceObject | undefined, shared: ResponseObject): ResponseObject {
  const ownJson = own && !('$ref' in own) ? own.content?.['application/json'] : undefined;
  if (!own || '$ref' in own || ownJson?.schema === undefined || !('$ref' in ownJson.schema)) return shared;
  if (ownJson.schema.$ref !== ERROR_BODY_REF) return shared;
  const examples = { ...ownJson.examples };
  for (const [key, example] of Object.entries(shared.content?.['application/json']?.examples ?? {})) {
    let name = key;
    for (let n = 2; name in examples; n += 1) name = `${key.replace(/_\d+$/, '')}_${n}`;
    examples[name] = example;
  }
  const codes = new Set([...own.description.split(' or '), ...shared.description.split(' or ')]);
  return {
    description: [...codes].join(' or '),
    headers: { ...shared.headers, ...own.headers },
    content: { 'application/json': { schema: { $ref: ERROR_BODY_REF }, examples } },
  };
}

/** Swagger UI at /api/docs and the JSON document at /api/docs-json. */
export function setupOpenApi(app: INestApplication, settings: OpenApiSettings): void {
  SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app, settings), {
    jsonDocumentUrl: 'api/docs-json',
    yamlDocumentUrl: 'api/docs-yaml',
    customSiteTitle: 'KYC API',
  });
}
