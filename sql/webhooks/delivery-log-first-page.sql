-- webhooks/delivery-log-first-page.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT id, account_id AS "accountId", verification_id AS "verificationId", type, body, created_at AS "createdAt",
delivery_status AS "deliveryStatus", attempt_count AS "attemptCount", cycle, cycle_attempts AS "cycleAttempts",
last_attempt_at AS "lastAttemptAt", last_response_status AS "lastResponseStatus", last_error AS "lastError",
next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt" FROM webhook_events WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
