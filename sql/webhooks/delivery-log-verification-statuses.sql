-- webhooks/delivery-log-verification-statuses.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT e.* FROM unnest($2::varchar[]) AS wanted(status) CROSS JOIN LATERAL (SELECT id, account_id AS "accountId", verification_id AS "verificationId", type, body, created_at AS "createdAt",
delivery_status AS "deliveryStatus", attempt_count AS "attemptCount", cycle, cycle_attempts AS "cycleAttempts",
last_attempt_at AS "lastAttemptAt", last_response_status AS "lastResponseStatus", last_error AS "lastError",
next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt" FROM webhook_events WHERE account_id = $1 AND delivery_status = wanted.status AND verification_id = $3 ORDER BY created_at DESC, id DESC LIMIT $4) e ORDER BY e."createdAt" DESC, e.id DESC LIMIT $4
