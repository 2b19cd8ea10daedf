import type { Pool } from 'pg';
import type { Response } from 'supertest';

/** Asserts the contract's error body: `{ error: { code, message, details: [{ field, issue }], request_id } }`. */
export function expectError(res: Response, status: number, code: string, field?: string): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(Object.keys(res.body)).toEqual(['error']);
  const error = res.body.error as Record<string, unknown>;
  expect(Object.keys(error).sort()).toEqual(['code', 'details', 'message', 'request_id']);
  expect(typeof error.message).toBe('string');
  expect((error.message as string).length).toBeGreaterThan(0);
  expect(Array.isArray(error.details)).toBe(true);
  for (const detail of error.details as Record<string, unknown>[]) {
    expect(Object.keys(detail).sort()).toEqual(['field', 'issue']);
    expect(typeof detail.field).toBe('string');
    expect(typeof detail.issue).toBe('string');
  }
  expect(error.request_id).toBe(res.headers['x-request-id']);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  if (field !== undefined) expect((error.details as { field: string }[]).map((d) => d.field)).toContain(field);
}

/** Everything a failed request must leave untouched. */
export async function dbSnapshot(db: Pool): Promise<Record<string, unknown>> {
  const { rows } = await db.query(`SELECT
      (SELECT count(*) FROM accounts) AS accounts,
      (SELECT max(updated_at) FROM accounts) AS accounts_updated,
      (SELECT string_agg(name || coalesce(webhook_url, ''), ',' ORDER BY id) FROM accounts) AS account_fields,
      (SELECT count(*) FROM account_secrets) AS secrets,
      (SELECT string_agg(coalesce(expires_at::text, '-'), ',' ORDER BY id) FROM account_secrets) AS secret_expiry,
      (SELECT count(*) FROM verifications) AS verifications,
      (SELECT max(updated_at) FROM verifications) AS verifications_updated,
      (SELECT sum(version) FROM verifications) AS versions,
      (SELECT count(*) FROM verification_status_history) AS history,
      (SELECT count(*) FROM webhook_events) AS events`);
  return rows[0] as Record<string, unknown>;
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
