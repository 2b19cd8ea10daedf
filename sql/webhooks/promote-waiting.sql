-- webhooks/promote-waiting.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
WITH acc AS (SELECT DISTINCT a FROM unnest($1::uuid[]) AS a),
     next AS (SELECT n.id FROM acc CROSS JOIN LATERAL (
       SELECT id FROM webhook_events WHERE account_id = acc.a AND delivery_status = 'pending' AND next_attempt_at IS NULL
        ORDER BY created_at, id LIMIT greatest(0, $2::int - (SELECT count(*)::int FROM (SELECT FROM webhook_events
          WHERE delivery_status = 'pending' AND next_attempt_at IS NOT NULL AND (account_id, next_attempt_at) >= (acc.a, '-infinity')
            AND (account_id, next_attempt_at) <= (acc.a, statement_timestamp()) ORDER BY account_id, next_attempt_at LIMIT $2::int) d))
        FOR UPDATE) n),
     e AS (UPDATE webhook_events w SET next_attempt_at = now() WHERE w.id = ANY (ARRAY(SELECT id FROM next)) RETURNING w.*)
     SELECT e.id, e.cycle, e.type, e.account_id AS "accountId", e.verification_id AS "verificationId", e.body,
(SELECT a.webhook_url FROM accounts a WHERE a.id = e.account_id) AS "webhookUrl"
FROM e e ORDER BY e.created_at, e.id
