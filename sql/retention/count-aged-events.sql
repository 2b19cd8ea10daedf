-- retention/count-aged-events.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT count(*)::int AS count FROM webhook_events WHERE delivery_status <> 'pending' AND delivery_status <> 'held' AND created_at < now() - make_interval(days => $1)
