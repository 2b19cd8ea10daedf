-- verifications/detail.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT version, response_json AS json, (
SELECT coalesce(json_agg(json_build_array(history.status, history.at, history.version) ORDER BY history.version), '[]')
  FROM verification_status_history history WHERE history.verification_id = verifications.id) AS history
FROM verifications WHERE id = $1 AND account_id = $2
