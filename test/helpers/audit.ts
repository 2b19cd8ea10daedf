import { createHash } from 'node:crypto';
import { Pool } from 'pg';

/** An audit entry as the export shows it. */
export interface AuditEntry {
  id: string;
  object: string;
  sequence: number;
  at: string;
  actor: { type: string; id?: string | null; name?: string | null; via?: string };
  action: string;
  outcome: string;
  target: { type: string; id: string } | null;
  account_id: string | null;
  changes: string[];
  request_id: string | null;
  source_ip?: string | null;
  previous_hash?: string;
  hash?: string;
}

/**
 * The contract's hash, written apart from the service's (src/audit/audit-hash.ts) so that the two
 * check each other: JSON with keys sorted at every depth and no spaces, built by hand here.
 */
function sortedJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${keys.map((key) => `${JSON.stringify(key)}:${sortedJson(object[key])}`).join(',')}}`;
}

export function expectedHash(entry: AuditEntry): string {
  const copy: Record<string, unknown> = { ...entry };
  delete copy.hash;
  return createHash('sha256')
    .update(entry.previous_hash + '\n' + sortedJson(copy), 'utf8')
    .digest('hex');
}

/** The entries of one account, oldest first, straight from the table. */
export async function auditActions(db: Pool, accountId: string): Promise<string[]> {
  const { rows } = await db.query<{ action: string }>(
    'SELECT action FROM audit_events WHERE account_id = $1 ORDER BY sequence',
    [accountId],
  );
  return rows.map((row) => row.action);
}

export function parseNdjson(text: string): AuditEntry[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as AuditEntry);
}
