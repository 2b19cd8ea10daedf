/**
 * The naive floor of the transitions benchmark: bare node:http + pg (a pool of 20, as the service)
 * answering POST /api/v1/internal/kyc/verifications/{id}/transitions with the obvious locked
 * transaction, one statement per step: BEGIN; SELECT … FOR UPDATE (with the account's webhook
 * URL); check the move; UPDATE verifications; INSERT the history entry; INSERT the outbox event
 * (the columns and payload the contract describes); COMMIT; 200 with the verification's JSON. It
 * enqueues nothing, and nothing delivers its events (see main.ts). Nothing of src/ is imported.
 * Env: FLOOR_PORT, DATABASE_URL, INTERNAL_API_TOKEN.
 */
import { IncomingMessage } from 'node:http';
import { Pool, PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import {
  FloorVerificationRow,
  Refusal,
  floorVerificationColumns,
  floorVerificationJson,
  serveFloor,
} from '../harness/floor-json';

const pool = new Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const TOKEN = process.env.INTERNAL_API_TOKEN ?? '';
const ROUTE = /^\/api\/v1\/internal\/kyc\/verifications\/([0-9a-f-]{36})\/transitions$/;
type VerificationStatus = 'pending' | 'processing' | 'approved' | 'rejected';
const NEXT: Record<string, string[]> = { pending: ['processing'], processing: ['pending', 'approved', 'rejected'] };
const STATUS_CHANGED = 'verification.status_changed';

/** The locked row, with its account for the outbox event. */
type Row = FloorVerificationRow & { status: VerificationStatus; accountId: string; webhookUrl: string | null };

async function move(client: PoolClient, id: string, status: VerificationStatus, expected?: number): Promise<unknown> {
  const locked = await client.query<Row>(
    `SELECT ${floorVerificationColumns('v.')}, v.account_id AS "accountId", a.webhook_url AS "webhookUrl"
       FROM verifications v JOIN accounts a ON a.id = v.account_id
      WHERE v.id = $1 FOR UPDATE OF v`,
    [id],
  );
  const current = locked.rows[0];
  if (!current) throw new Refusal(404, 'not_found');
  if (expected !== undefined && expected !== current.version) throw new Refusal(409, 'version_conflict');
  if (current.redactedAt || !NEXT[current.status]?.includes(status)) throw new Refusal(409, 'invalid_transition');
  if (status === 'rejected') throw new Refusal(400, 'validation_failed'); // the floor takes no reasons
  const at = new Date(Math.max(Date.now(), current.updatedAt.getTime()));
  const [version, submittedAt, decidedAt] = [
    current.version + 1,
    status === 'processing' ? at : current.submittedAt,
    NEXT[status] ? null : at,
  ];
  const next: Row = { ...current, status, version, updatedAt: at, submittedAt, decidedAt, rejectionReasons: [] };
  await client.query(
    `UPDATE verifications SET status = $2, version = $3, updated_at = $4, submitted_at = $5, decided_at = $6,
            rejection_reasons = $7::text[] WHERE id = $1`,
    [id, next.status, next.version, at, next.submittedAt, next.decidedAt, next.rejectionReasons],
  );
  await client.query(
    'INSERT INTO verification_status_history (verification_id, version, status, at) VALUES ($1, $2, $3, $4)',
    [id, next.version, next.status, at],
  );
  const [verification, eventId] = [floorVerificationJson(next), uuidv7()];
  const event = { id: eventId, type: STATUS_CHANGED, timestamp: at.toISOString() };
  const body = JSON.stringify({ ...event, data: { previous_status: current.status, verification } });
  const delivery = current.webhookUrl ? ['pending', null, at] : ['failed', 'no_webhook_url', null];
  await client.query(
    `INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, last_error, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [eventId, current.accountId, id, STATUS_CHANGED, body, at, ...delivery],
  );
  return verification;
}

async function transition(id: string, status: VerificationStatus, expected?: number): Promise<unknown> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const verification = await move(client, id, status, expected);
    await client.query('COMMIT');
    return verification;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new Refusal(400, 'validation_failed');
  }
}

async function handle(req: IncomingMessage): Promise<unknown> {
  const match = ROUTE.exec(req.url ?? '');
  if (req.method !== 'POST' || !match?.[1]) throw new Refusal(404, 'not_found');
  if (req.headers.authorization !== `Bearer ${TOKEN}`) throw new Refusal(401, 'unauthorized');
  const body = (await readJson(req)) as { status?: unknown; expected_version?: unknown } | null;
  const expected = body?.expected_version;
  const statuses = ['pending', 'processing', 'approved', 'rejected'];
  if (!statuses.includes(String(body?.status)) || (expected !== undefined && !Number.isInteger(expected)))
    throw new Refusal(400, 'validation_failed');
  return transition(match[1], body?.status as VerificationStatus, expected as number | undefined);
}

serveFloor('transitions floor', pool, handle);
