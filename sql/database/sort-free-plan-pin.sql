-- database/sort-free-plan-pin.sql: composed by the service, written by npm run sql:snapshots; edit the code, not this file.
SELECT current_setting('enable_sort') AS sort, current_setting('jit') AS jit,
set_config('enable_sort', 'off', true), set_config('jit', 'off', true)
