-- database/sort-free-plan-restore.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT set_config('enable_sort', $1, true), set_config('jit', $2, true)
