-- webhooks/outbox-backlog.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT (SELECT count(*)::int FROM (SELECT 1 FROM webhook_events WHERE delivery_status = 'pending' AND next_attempt_at <= now() LIMIT $1) d) AS count, COALESCE((SELECT EXTRACT(EPOCH
FROM now() - next_attempt_at) FROM webhook_events WHERE delivery_status = 'pending' AND next_attempt_at <= now() ORDER BY next_attempt_at LIMIT 1), 0)::float8 AS "oldestDueSeconds",
(SELECT count(*)::int FROM (SELECT 1 FROM webhook_events WHERE delivery_status = 'pending' AND next_attempt_at IS NULL LIMIT $1) w) AS waiting
