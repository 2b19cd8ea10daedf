-- webhooks/relay-overdue.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT e.id, e.cycle, e.type, e.account_id AS "accountId", e.verification_id AS "verificationId", e.body,
(SELECT a.webhook_url FROM accounts a WHERE a.id = e.account_id) AS "webhookUrl"
FROM (SELECT w.*, row_number() OVER (PARTITION BY w.account_id ORDER BY w.next_attempt_at) AS turn
         FROM webhook_events w WHERE w.delivery_status = 'pending' AND w.next_attempt_at < now() - make_interval(secs => $1)) e
      ORDER BY e.turn, e.next_attempt_at LIMIT $2
