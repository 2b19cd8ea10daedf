-- webhooks/relay-overdue.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
WITH RECURSIVE due_accounts(id) AS ((SELECT w.account_id FROM webhook_events w WHERE w.delivery_status = 'pending' AND w.next_attempt_at IS NOT NULL AND EXISTS (SELECT FROM webhook_events o WHERE o.delivery_status = 'pending' AND o.next_attempt_at < now() - make_interval(secs => $1)) ORDER BY 1 LIMIT 1) UNION ALL
       SELECT (SELECT w.account_id FROM webhook_events w WHERE w.delivery_status = 'pending' AND w.next_attempt_at IS NOT NULL AND w.account_id > a.id ORDER BY 1 LIMIT 1) FROM due_accounts a WHERE a.id IS NOT NULL),
     late AS (SELECT f.* FROM due_accounts a, LATERAL (SELECT w.account_id, w.next_attempt_at AS at, w.id
    FROM webhook_events w WHERE w.delivery_status = 'pending' AND w.next_attempt_at IS NOT NULL AND (w.account_id, w.next_attempt_at, w.id) >= (a.id, '-infinity', '00000000-0000-0000-0000-000000000000')
     AND (w.account_id, w.next_attempt_at) < (a.id, now() - make_interval(secs => $1)) ORDER BY 1, 2, 3 LIMIT 1) f),
     walk(account_id, at, id, n) AS (SELECT *, 1 FROM late UNION ALL
       SELECT f.*, walk.n + 1 FROM walk, LATERAL (SELECT w.account_id, w.next_attempt_at AS at, w.id
    FROM webhook_events w WHERE w.delivery_status = 'pending' AND w.next_attempt_at IS NOT NULL AND (w.account_id, w.next_attempt_at, w.id) > (walk.account_id, walk.at, walk.id)
     AND (w.account_id, w.next_attempt_at) < (walk.account_id, now() - make_interval(secs => $1)) ORDER BY 1, 2, 3 LIMIT 1) f
        WHERE walk.n < $2::float8 / (SELECT count(*) FROM late))
     SELECT e.id, e.cycle, e.type, e.account_id AS "accountId", e.verification_id AS "verificationId", e.body,
(SELECT a.webhook_url FROM accounts a WHERE a.id = e.account_id) AS "webhookUrl"
FROM (SELECT * FROM webhook_events WHERE id = ANY (ARRAY(SELECT id FROM walk ORDER BY at LIMIT $2))) e ORDER BY e.next_attempt_at
