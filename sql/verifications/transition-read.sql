-- verifications/transition-read.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT id, account_id AS "accountId", external_user_id AS "externalUserId", status, version, created_at AS "createdAt", updated_at AS "updatedAt", submitted_at AS "submittedAt", decided_at AS "decidedAt", applicant, document, rejection_reasons AS "rejectionReasons", metadata, redacted_at AS "redactedAt", (SELECT a.webhook_url FROM accounts a WHERE a.id = verifications.account_id) AS "webhookUrl"
FROM verifications WHERE id = $1
