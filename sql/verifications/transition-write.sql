-- verifications/transition-write.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
WITH updated AS (
  UPDATE verifications
     SET status = $3, version = version + 1, updated_at = $4, submitted_at = $5, decided_at = $6,
         rejection_reasons = $7::text[], applicant = $8::jsonb, document = $9::jsonb, response_json = $10
   WHERE id = $1 AND version = $2 AND redacted_at IS NULL
  RETURNING id, version, status, updated_at),
history AS (
  INSERT INTO verification_status_history (verification_id, version, status, at)
  SELECT id, version, status, updated_at FROM updated),
outbox AS (
  INSERT INTO webhook_events (id, account_id, verification_id, type, body, created_at, delivery_status, last_error, next_attempt_at) SELECT v.id, v.account_id, v.verification_id, v.type, v.body, v.created_at, CASE WHEN g.held THEN 'held' ELSE v.delivery_status END, v.last_error, CASE WHEN g.held THEN NULL ELSE v.next_attempt_at END
  FROM (SELECT $11::uuid AS id, $12::uuid AS account_id, $13::uuid AS verification_id, $14::varchar AS type, $15::text AS body, $16::timestamptz AS created_at, $17::varchar AS delivery_status, $18::varchar AS last_error, $19::timestamptz AS next_attempt_at FROM updated) v LEFT JOIN LATERAL (SELECT true AS held FROM webhook_endpoints w
         WHERE w.account_id = v.account_id AND w.disabled_at IS NOT NULL AND v.delivery_status = 'pending' FOR KEY SHARE) g ON true)
SELECT version FROM updated
