import { Client } from 'pg';
import { iso } from '../harness/sql';

/**
 * The two aged pools, by age (days since `decided_at`). The service's pass runs with
 * PII_RETENTION_DAYS=30 and so sees only its own pool; the floor redacts the rows aged between
 * FLOOR_SELECTS_FROM_DAYS and PII_RETENTION_DAYS, so neither takes the other's rows and each redacts
 * the same number of rows of the same shape. Both pools are younger than the default
 * WEBHOOK_EVENT_RETENTION_DAYS (90): the pass deletes no event, its deletion step finds nothing.
 */
export type AgeWindow = Record<'minDays' | 'maxDays', number>;

export const PII_RETENTION_DAYS = 30;
/** The floor's rows are those aged between this and PII_RETENTION_DAYS. */
export const FLOOR_SELECTS_FROM_DAYS = 20;

export const SERVICE_POOL: AgeWindow = { minDays: 31, maxDays: 88 };
export const FLOOR_POOL: AgeWindow = { minDays: 21, maxDays: 28 };

// The contract's values, written out: a floor imports nothing of src/.
const REDACTED_EXTERNAL_USER_ID = '[redacted]';
const VERIFICATION_REDACTED = 'verification.redacted';
const NO_WEBHOOK_URL = 'no_webhook_url';

/** A UUIDv7 (time-ordered, like the service's uuid v7) made in SQL; `seed` makes it one per row. */
const uuidV7 = (seed: string): string =>
  `(lpad(to_hex(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
  || '7' || substr(md5(random()::text || ${seed}), 1, 3) || '8' || substr(md5(random()::text || ${seed}), 4, 15))::uuid`;

/**
 * The floor: the same erasure as VerificationRedactor.redactExpired, as one hand-written set-based
 * statement per batch (its own transaction), from a bare pg client: take up to $3 aged
 * verifications oldest first with SKIP LOCKED; erase their personal fields; rewrite every event
 * payload of theirs in SQL (jsonb: the verification's personal fields erased, redacted_at set);
 * null their attempts' response excerpts; insert one `verification.redacted` event each, built in
 * SQL as buildOutboxEvent builds it (dead at once when the account has no webhook URL). No Bull job,
 * no JSON work in JavaScript. Its rows are the ones aged between $1 and $2 days (above).
 */
export const FLOOR_REDACT_SQL = `
  WITH clock AS (SELECT date_trunc('milliseconds', now()) AS now),
  aged AS (
    SELECT v.id FROM verifications v
     WHERE v.redacted_at IS NULL
       AND coalesce(v.decided_at, v.updated_at) < now() - make_interval(days => $1)
       AND coalesce(v.decided_at, v.updated_at) >= now() - make_interval(days => $2)
     ORDER BY coalesce(v.decided_at, v.updated_at) LIMIT $3 FOR UPDATE SKIP LOCKED),
  redacted AS (
    UPDATE verifications v
       SET external_user_id = '${REDACTED_EXTERNAL_USER_ID}', applicant = NULL, document = NULL, metadata = '{}'::jsonb,
           redacted_at = greatest(clock.now, v.updated_at), updated_at = greatest(clock.now, v.updated_at)
      FROM aged, clock
     WHERE v.id = aged.id
    RETURNING v.*, (SELECT a.webhook_url FROM accounts a WHERE a.id = v.account_id) AS webhook_url),
  bodies AS (
    SELECT e.id, r.redacted_at, e.body::jsonb AS old
      FROM webhook_events e JOIN redacted r ON e.account_id = r.account_id AND e.verification_id = r.id),
  payload AS (
    UPDATE webhook_events e
       SET body = CASE WHEN jsonb_typeof(b.old #> '{data,verification}') = 'object'
                  THEN jsonb_set(b.old, '{data,verification}', (b.old #> '{data,verification}') || jsonb_build_object(
                         'external_user_id', '${REDACTED_EXTERNAL_USER_ID}', 'applicant', NULL, 'document', NULL,
                         'metadata', '{}'::jsonb, 'redacted_at', ${iso('b.redacted_at')}))::text
                  ELSE e.body END,
           redacted_at = b.redacted_at
      FROM bodies b
     WHERE e.id = b.id
    RETURNING e.id),
  excerpt AS (
    UPDATE webhook_attempts a SET response_body = NULL
      FROM payload p WHERE a.event_id = p.id AND a.response_body IS NOT NULL),
  inserted AS (
    INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, last_error,
                                next_attempt_at)
    SELECT x.id, r.account_id, r.id, '${VERIFICATION_REDACTED}',
      json_build_object('id', x.id, 'type', '${VERIFICATION_REDACTED}', 'timestamp', ${iso('r.updated_at')},
        'data', json_build_object('reason', 'retention', 'verification', json_build_object(
          'id', r.id, 'object', 'verification', 'external_user_id', r.external_user_id, 'status', r.status,
          'version', r.version, 'created_at', ${iso('r.created_at')}, 'updated_at', ${iso('r.updated_at')},
          'submitted_at', ${iso('r.submitted_at')}, 'decided_at', ${iso('r.decided_at')}, 'applicant', NULL,
          'document', NULL, 'rejection_reasons', to_json(r.rejection_reasons), 'metadata', r.metadata,
          'redacted_at', ${iso('r.redacted_at')})))::text,
      r.updated_at,
      CASE WHEN r.webhook_url IS NULL THEN 'failed' ELSE 'pending' END,
      CASE WHEN r.webhook_url IS NULL THEN '${NO_WEBHOOK_URL}' END,
      CASE WHEN r.webhook_url IS NOT NULL THEN r.updated_at END
    FROM redacted r CROSS JOIN LATERAL (SELECT ${uuidV7('r.id::text')} AS id) x
    RETURNING 1)
  SELECT count(*)::int AS n FROM inserted`;

/** The floor on its own connection, one batch at a time, as one pass of the service goes. */
export async function connectFloor(databaseUrl: string) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  /** One batch of up to `limit`; returns how many verifications it redacted. */
  const batch = async (limit: number): Promise<number> => {
    const values = [FLOOR_SELECTS_FROM_DAYS, PII_RETENTION_DAYS, limit];
    const { rows } = await client.query<{ n: number }>({ name: 'floor-redact', text: FLOOR_REDACT_SQL, values });
    return rows[0]?.n ?? 0;
  };
  return { batch, close: () => client.end() };
}
