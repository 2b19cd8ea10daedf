-- webhooks/delivery-record.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
WITH input AS (
  SELECT * FROM unnest($1::uuid[], $2::integer[], $3::timestamptz[], $4::integer[], $5::varchar[], $6::varchar[],
                       $7::timestamptz[], $8::integer[], $9::varchar[], $10::varchar[])
    WITH ORDINALITY AS t(id, cycle, at, response_status, error, status, next_attempt_at, duration_ms, response_body, url, n)),
updated AS (
  UPDATE webhook_events e
   SET attempt_count = e.attempt_count + 1, cycle_attempts = e.cycle_attempts + 1,
       last_attempt_at = i.at, last_response_status = i.response_status, last_error = i.error,
       delivery_status = CASE WHEN e.delivery_status = 'held' AND i.status <> 'delivered' THEN 'held'
                              WHEN i.status = 'held' AND (i.url IS DISTINCT FROM (SELECT a.webhook_url FROM accounts a WHERE a.id = e.account_id)) THEN 'pending' ELSE i.status END,
       next_attempt_at = CASE WHEN e.delivery_status = 'held' AND i.status <> 'delivered' THEN NULL
                              WHEN i.status = 'held' AND (i.url IS DISTINCT FROM (SELECT a.webhook_url FROM accounts a WHERE a.id = e.account_id)) THEN i.at ELSE i.next_attempt_at END,
       delivered_at = CASE WHEN i.status = 'delivered' THEN now() ELSE e.delivered_at END
  FROM input i
 WHERE e.id = i.id AND e.cycle = i.cycle AND e.delivery_status IN ('pending', 'held')
RETURNING e.id, e.account_id, e.attempt_count, i.at, i.response_status, i.duration_ms, i.error,
          CASE WHEN e.redacted_at IS NULL THEN i.response_body END AS response_body, i.n, (i.url IS DISTINCT FROM (SELECT a.webhook_url FROM accounts a WHERE a.id = e.account_id)) AS moved,
          e.delivery_status = 'held' AS held),
inserted AS (
  INSERT INTO webhook_attempts (event_id, number, at, response_status, duration_ms, error, response_body)
  SELECT id, attempt_count, at, response_status, duration_ms, error, response_body FROM updated),
health AS (
  INSERT INTO webhook_endpoint_health AS h (account_id, last_success_at, last_failure_at, failing_since, consecutive_failures)
SELECT s.account_id, max(s.at) FILTER (WHERE s.error IS NULL), max(s.at) FILTER (WHERE s.error IS NOT NULL),
       min(s.at) FILTER (WHERE s.error IS NOT NULL AND s.at > coalesce(s.last_ok, '-infinity')),
       count(*) FILTER (WHERE s.error IS NOT NULL AND s.at > coalesce(s.last_ok, '-infinity'))
  FROM (SELECT a.account_id, a.at, a.error, max(a.at) FILTER (WHERE a.error IS NULL) OVER (PARTITION BY a.account_id) AS last_ok
          FROM (SELECT * FROM updated WHERE NOT moved) a) s
  LEFT JOIN webhook_endpoint_health cur ON cur.account_id = s.account_id
 GROUP BY s.account_id, cur.account_id, cur.consecutive_failures, cur.last_success_at
HAVING cur.account_id IS NULL OR cur.consecutive_failures > 0 OR cur.last_success_at IS NULL
    OR count(*) FILTER (WHERE s.error IS NOT NULL) > 0
    OR max(s.at) FILTER (WHERE s.error IS NULL) >= cur.last_success_at + interval '1 second'
 ORDER BY s.account_id
ON CONFLICT (account_id) DO UPDATE SET
  last_success_at = greatest(h.last_success_at, excluded.last_success_at),
  last_failure_at = greatest(h.last_failure_at, excluded.last_failure_at),
  failing_since = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.failing_since
                       ELSE coalesce(h.failing_since, excluded.failing_since) END,
  consecutive_failures = CASE WHEN excluded.last_success_at IS NOT NULL THEN excluded.consecutive_failures
                              ELSE h.consecutive_failures + excluded.consecutive_failures END)
SELECT n, moved, held FROM updated
