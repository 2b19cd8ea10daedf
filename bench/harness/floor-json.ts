import { IncomingMessage, ServerResponse, createServer } from 'node:http';
import type { Pool } from 'pg';

/**
 * What the benchmarks' hand-written floors share: a verification row as they select it, the
 * contract's JSON of it written out by hand (not src/'s mapper or SQL: a floor is the obvious code
 * a developer would write), and the HTTP server.
 */

/** A verification as the floors read it (camelCase aliases, pg's default parsing). */
export type FloorVerificationRow = Record<'id' | 'externalUserId' | 'status', string> &
  Record<'createdAt' | 'updatedAt', Date> &
  Record<'submittedAt' | 'decidedAt' | 'redactedAt', Date | null> & {
    version: number;
    applicant: Record<string, string | null> | null;
    document: { type: string; country: string } | null;
    rejectionReasons: string[];
    metadata: Record<string, string>;
  };

/** The select list of a FloorVerificationRow; `table` qualifies every column (e.g. `v.`). */
export function floorVerificationColumns(table = ''): string {
  return `${table}id, ${table}external_user_id AS "externalUserId", ${table}status, ${table}version,
    ${table}created_at AS "createdAt", ${table}updated_at AS "updatedAt", ${table}submitted_at AS "submittedAt",
    ${table}decided_at AS "decidedAt", ${table}applicant, ${table}document,
    ${table}rejection_reasons AS "rejectionReasons", ${table}metadata, ${table}redacted_at AS "redactedAt"`;
}

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

/** The contract's verification object, field by field. */
export function floorVerificationJson(v: FloorVerificationRow): Record<string, unknown> {
  return {
    id: v.id,
    object: 'verification',
    external_user_id: v.externalUserId,
    status: v.status,
    version: v.version,
    created_at: iso(v.createdAt),
    updated_at: iso(v.updatedAt),
    submitted_at: iso(v.submittedAt),
    decided_at: iso(v.decidedAt),
    applicant: v.applicant && {
      first_name: v.applicant.first_name ?? null,
      last_name: v.applicant.last_name ?? null,
      date_of_birth: v.applicant.date_of_birth ?? null,
      email: v.applicant.email ?? null,
    },
    document: v.document && { type: v.document.type, country: v.document.country },
    rejection_reasons: v.rejectionReasons,
    metadata: v.metadata,
    redacted_at: iso(v.redactedAt),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) };
  res.writeHead(status, headers).end(text);
}

/** A refused request: its HTTP status and the contract's error code. */
export class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
  ) {
    super(code);
  }
}

/**
 * A floor's server on FLOOR_PORT: what `handle` resolves with is answered 200, a Refusal with its
 * status and code, any other error 500. SIGTERM closes the server and `pool`.
 */
export function serveFloor(name: string, pool: Pool, handle: (req: IncomingMessage) => Promise<unknown>) {
  const server = createServer((req, res) => {
    handle(req).then(
      (body) => sendJson(res, 200, body),
      (error: unknown) => {
        if (error instanceof Refusal) return sendJson(res, error.status, { error: { code: error.code } });
        process.stderr.write(`${name}: ${(error as Error).message}\n`);
        sendJson(res, 500, { error: { code: 'internal_error' } });
      },
    );
  });
  server.keepAliveTimeout = 65_000;
  server.listen(Number(process.env.FLOOR_PORT), '127.0.0.1');
  process.on('SIGTERM', () => void (server.close(), pool.end()));
}
