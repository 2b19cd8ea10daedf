-- retention/count-expired-verifications.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT count(*)::int AS count FROM verifications WHERE redacted_at IS NULL AND coalesce(decided_at, updated_at) < now() - make_interval(days => $1)
