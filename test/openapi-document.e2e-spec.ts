import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { OpenAPIObject, SchemaObject } from '@nestjs/swagger';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { TestApp, startApp } from './helpers/test-app';

/** Every schema object in the document, with where it is. */
function* schemasIn(node: unknown, at: string): Generator<[string, SchemaObject]> {
  if (!node || typeof node !== 'object') return;
  if ('type' in node || 'properties' in node || 'allOf' in node) yield [at, node as SchemaObject];
  for (const [key, value] of Object.entries(node)) yield* schemasIn(value, `${at}/${key}`);
}

describe('OpenAPI document served at /api/docs-json', () => {
  let t: TestApp;
  let doc: OpenAPIObject;

  beforeAll(async () => {
    // Every limit on, as in production by default, so the document declares all its 429s.
    t = await startApp({
      AUTH_FAILURE_LIMIT_PER_MINUTE: '20',
      TEST_EVENTS_PER_MINUTE: '60',
      RATE_LIMIT_PER_MINUTE: '1200',
    });
    const res = await t.http.get('/api/docs-json');
    expect(res.status).toBe(200);
    doc = res.body as OpenAPIObject;
  });
  afterAll(async () => {
    await t.close();
  });

  it('passes Redocly lint (recommended rules) with 0 errors and 0 warnings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const cli = join(__dirname, '..', 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, 'lint', '--format', 'json', file], {
        cwd: join(__dirname, '..'),
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      }).catch((error: { stdout: string; stderr: string }) => error);
      const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: unknown[] };
      expect({ totals: report.totals, problems: report.problems, stderr: report.totals.errors ? stderr : '' }).toEqual({
        totals: expect.objectContaining({ errors: 0, warnings: 0 }),
        problems: [],
        stderr: '',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('declares the 429 of every limit that is on, with Retry-After', () => {
    const responses = (path: string, method: 'get' | 'post') =>
      (doc.paths[path][method]?.responses ?? {}) as Record<string, { headers?: Record<string, unknown> }>;
    for (const [path, method] of [
      ['/api/v1/admin/accounts', 'post'],
      ['/api/v1/internal/kyc/verifications', 'post'],
      ['/api/v1/public/kyc/verifications', 'get'],
      ['/api/v1/public/kyc/webhook-events/test', 'post'],
    ] as const) {
      expect({ path, headers: Object.keys(responses(path, method)['429']?.headers ?? {}) }).toEqual({
        path,
        headers: expect.arrayContaining(['Retry-After', 'x-request-id']),
      });
    }
    expect(responses('/health/live', 'get')['429']).toBeUndefined();
  });

  it('types every number as an integer: the contract has no fractional field or parameter', () => {
    const numbers = [...schemasIn(doc, '#')].filter(([, schema]) => schema.type === 'number').map(([at]) => at);
    expect(numbers).toEqual([]);
  });

  it('emits each DTO property TypeScript declares as number with type integer', () => {
    const checked: string[] = [];
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
      for (const [property, value] of Object.entries((schema as SchemaObject).properties ?? {})) {
        if ('$ref' in value) continue;
        if (value.type === 'integer' || value.type === 'number') {
          checked.push(`${name}.${property}`);
          expect({ at: `${name}.${property}`, type: value.type }).toEqual({
            at: `${name}.${property}`,
            type: 'integer',
          });
        }
      }
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        'VerificationResponseDto.version',
        'TransitionVerificationDto.expected_version',
        'RotateSecretDto.grace_period_seconds',
        'WebhookEventResponseDto.attempt_count',
        'WebhookEventResponseDto.last_response_status',
        'WebhookAttemptResponseDto.number',
        'WebhookAttemptResponseDto.duration_ms',
        'RedeliveryResponseDto.count',
        'StatusHistoryEntryDto.version',
      ]),
    );
  });

  it('types limit as an integer and every path id as a uuid', () => {
    const params = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.values(item).flatMap((op: { parameters?: { name: string; in: string; schema?: SchemaObject }[] }) =>
        (op.parameters ?? []).map((p) => ({ path, ...p })),
      ),
    );
    const limits = params.filter((p) => p.name === 'limit');
    // The verifications and webhook-events lists, the admin's audit trail and the client's view of it.
    expect(limits.map((p) => p.path).sort()).toEqual([
      '/api/v1/admin/audit-events',
      '/api/v1/public/kyc/audit-events',
      '/api/v1/public/kyc/verifications',
      '/api/v1/public/kyc/webhook-events',
    ]);
    for (const p of limits) expect(p.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    const ids = params.filter((p) => p.in === 'path');
    expect(ids.length).toBeGreaterThan(5);
    for (const p of ids) expect(p.schema).toEqual({ type: 'string', format: 'uuid' });
  });

  it('lets applicant and document be null, and webhook_url be a string or null', () => {
    const ajv = new Ajv({ strict: false });
    addFormats(ajv);
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
      ajv.addSchema(schema, `#/components/schemas/${name}`);
    }
    const verification = ajv.getSchema('#/components/schemas/VerificationResponseDto');
    const base = {
      id: '0193a6f2-0000-7000-8000-000000000001',
      object: 'verification',
      external_user_id: 'user-42',
      status: 'pending',
      version: 1,
      created_at: '2026-11-22T01:02:03.456Z',
      updated_at: '2026-11-22T01:02:03.456Z',
      submitted_at: null,
      decided_at: null,
      applicant: null,
      document: null,
      rejection_reasons: [],
      metadata: {},
      redacted_at: null,
    };
    expect(verification?.(base)).toBe(true);
    const withData = { ...base, applicant: { first_name: 'Ada', last_name: null, date_of_birth: null, email: null } };
    expect(verification?.({ ...withData, document: { type: 'passport', country: 'GB' } })).toBe(true);
    expect(verification?.({ ...base, applicant: 'Ada' })).toBe(false);
    expect(verification?.({ ...base, version: 1.5 })).toBe(false);
    for (const dto of ['CreateAccountDto', 'UpdateAccountDto']) {
      const url = (doc.components?.schemas?.[dto] as SchemaObject).properties?.webhook_url;
      expect(url).toMatchObject({ type: 'string', nullable: true, format: 'uri' });
    }
  });
});
