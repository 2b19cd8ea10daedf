-- webhooks/relay-room.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT a AS "accountId", (SELECT count(*)::int FROM (SELECT FROM webhook_events w
  WHERE w.delivery_status = 'pending' AND w.next_attempt_at IS NOT NULL
    AND (w.account_id, w.next_attempt_at) >= (a, now() - make_interval(secs => $2))
    AND (w.account_id, w.next_attempt_at) <= (a, now()) ORDER BY w.account_id, w.next_attempt_at LIMIT $3) d) AS n
FROM unnest($1::uuid[]) AS a
