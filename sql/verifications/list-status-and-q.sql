-- verifications/list-status-and-q.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT page.page_id AS id, to_char(page.page_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS cursor_at, verifications.response_json AS json FROM (
  SELECT id AS page_id, updated_at AS page_at FROM verifications WHERE account_id = $1 AND status = ANY($2::varchar[]) AND search_text LIKE '%' || lower($3) || '%' ORDER BY updated_at DESC, id DESC LIMIT $4
) page JOIN verifications ON verifications.id = page.page_id
ORDER BY page.page_at DESC, page.page_id DESC
