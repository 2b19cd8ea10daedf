-- webhooks/bulk-replay-selection.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
WITH picked AS (SELECT e.* FROM unnest($2::varchar[]) AS wanted(status) CROSS JOIN LATERAL (SELECT id, created_at FROM webhook_events WHERE account_id = $1 AND delivery_status = wanted.status
              ORDER BY created_at, id LIMIT $3 FOR UPDATE SKIP LOCKED) e ORDER BY e.created_at, e.id LIMIT $3),
e AS (UPDATE webhook_events SET delivery_status = 'pending', cycle = cycle + 1, cycle_attempts = 0, next_attempt_at = NULL WHERE id IN (SELECT id FROM picked) RETURNING id)
SELECT id FROM e
