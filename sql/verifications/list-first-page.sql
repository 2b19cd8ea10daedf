-- verifications/list-first-page.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT page.id, to_char(page.page_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS cursor_at, page.json FROM (
  SELECT id, created_at AS page_at, response_json AS json FROM verifications WHERE account_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
) page ORDER BY page.page_at DESC, page.id DESC
