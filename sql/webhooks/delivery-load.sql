-- webhooks/delivery-load.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT e.id, e.account_id AS "accountId", e.body, e.created_at AS "createdAt", e.delivery_status AS "deliveryStatus",
      e.cycle, e.cycle_attempts AS "cycleAttempts", e.next_attempt_at AS "nextAttemptAt", e.last_error AS "lastError",
      (SELECT a.webhook_url FROM accounts a WHERE a.id = e.account_id) AS "webhookUrl", ARRAY(SELECT s.secret_ciphertext FROM account_secrets s
                WHERE s.account_id = e.account_id AND (s.expires_at IS NULL OR s.expires_at > now())
                ORDER BY s.created_at DESC) AS "secretCiphertexts",
    (SELECT w.disabled_reason FROM webhook_endpoints w WHERE w.account_id = e.account_id) AS "disabledReason",
         (SELECT w.disabled_at FROM webhook_endpoints w WHERE w.account_id = e.account_id) AS "disabledAt", EXISTS (SELECT 1 FROM webhook_events x WHERE x.account_id = e.account_id AND x.delivery_status = 'pending' AND x.next_attempt_at IS NULL) AS waiting
 FROM webhook_events e
WHERE e.id = ANY($1::uuid[])
