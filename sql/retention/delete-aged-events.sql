-- retention/delete-aged-events.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
WITH aged AS (
  SELECT id FROM webhook_events WHERE delivery_status <> 'pending' AND delivery_status <> 'held' AND created_at < now() - make_interval(days => $1) ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED),
deleted AS (
  DELETE FROM webhook_events e USING aged
   WHERE e.id = aged.id AND e.delivery_status <> 'pending' AND e.delivery_status <> 'held' RETURNING 1)
SELECT count(*)::int AS count FROM deleted
