import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { errorExamples, ERROR_BODY_SCHEMA, RATE_LIMIT_HEADERS, STATUS_CODES } from 'src/ops/openapi-errors';

type Operation = NonNullable<OpenAPIObject['paths'][string]['get']>;
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

const DESCRIPTION = `KYC verification lookup and signed webhook result delivery.

* **Public API** (\`/api/v1/public\`): \`Authorization: Bearer <webhook_secret>\` (scheme \`client\`).
  Every response carries \`RateLimit-Limit\`, \`RateLimit-Remaining\` and \`RateLimit-Reset\` (seconds);
  over the per-account limit the answer is 429 \`rate_limited\` with \`Retry-After\`. Requests without a
  valid credential are counted per client address, so 401 answers carry the headers too.
* **Internal API** (\`/api/v1/internal\`): \`Authorization: Bearer <INTERNAL_API_TOKEN>\` (scheme \`internal\`).
* **Admin API** (\`/api/v1/admin\`): \`Authorization: Bearer <ADMIN_TOKEN>\` (scheme \`admin\`).

Every response carries \`x-request-id\` (the caller's value when it is 1–128 of \`[A-Za-z0-9._-]\`,
otherwise a new one). Every non-2xx response has the error body below. Unknown query parameters and
body fields are rejected with 400. With PostgreSQL down, API routes answer 503 \`service_unavailable\`.`;

/** The OpenAPI 3 document of every route, with the contract's error body on every operation. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('KYC verification lookup and result delivery')
    .setDescription(DESCRIPTION)
    .setVersion('1')
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: "The account's webhook secret (`whsec_…`)" },
      'client',
    )
    .addBearerAuth(
      { type: 'http', scheme: 'bearer', description: 'INTERNAL_API_TOKEN (capture widget, processing pipeline)' },
      'internal',
    )
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN (operations staff)' }, 'admin')
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controllerKey, methodKey) => `${controllerKey.replace(/Controller$/, '')}_${methodKey}`,
  });
  document.components = {
    ...document.components,
    schemas: { ...document.components?.schemas, ErrorBody: ERROR_BODY_SCHEMA },
  };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) addErrorResponses(path, method, operation);
    }
  }
  return document;
}

function addErrorResponses(path: string, method: (typeof METHODS)[number], operation: Operation): void {
  const api = path.startsWith('/api/v1/');
  const isPublic = path.startsWith('/api/v1/public/');
  const codes: number[] = api ? [400, 401, 404, 500, 503] : path === '/health/ready' ? [503] : [];
  if (isPublic) codes.push(429);
  if (/\/(transitions)$/.test(path)) codes.push(409);
  if (api && (method === 'post' || method === 'patch' || method === 'put')) codes.push(413, 415);
  const responses = operation.responses;
  for (const status of codes) {
    if (responses[status] && 'content' in responses[status] && responses[status].content) continue;
    const description =
      (responses[status] as { description?: string } | undefined)?.description ?? STATUS_CODES[status];
    responses[status] = {
      description,
      content: {
        'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' }, examples: errorExamples(status) },
      },
      ...(status === 429
        ? {
            headers: {
              ...RATE_LIMIT_HEADERS,
              'Retry-After': { description: 'Seconds until a retry can succeed', schema: { type: 'integer' } },
            },
          }
        : {}),
      ...(status === 401 ? { headers: { 'WWW-Authenticate': { schema: { type: 'string', example: 'Bearer' } } } } : {}),
    };
  }
  if (isPublic) {
    for (const response of Object.values(responses)) {
      if (!response || '$ref' in response) continue;
      response.headers = { ...RATE_LIMIT_HEADERS, ...response.headers };
    }
  }
}

/** Swagger UI at /api/docs and the JSON document at /api/docs-json. */
export function setupOpenApi(app: INestApplication): void {
  SwaggerModule.setup('api/docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'api/docs-json',
    yamlDocumentUrl: 'api/docs-yaml',
    customSiteTitle: 'KYC API',
  });
}
