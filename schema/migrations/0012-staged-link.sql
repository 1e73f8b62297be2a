-- Migration 12: a staged log row's first link in two plain columns.
--
-- Nearly every changing tool call makes one version. Kept in the JSON list `writes`, each
-- staged row cost `publish` a parse of that list and checks of each pair (json_each and four
-- JSON functions a row, about half of the publish); kept in plain columns it costs a type
-- check (docs/benchmarks.md, thirteenth session). Rows staged before this migration keep
-- all their links in `writes`, which publish still reads.
--   path, n   the first version the call made, or both NULL when it made none
--   writes    JSON list of the [path, n] versions after the first ('[]' when there are none)
ALTER TABLE ws_tool_call_staged ADD COLUMN path TEXT;
ALTER TABLE ws_tool_call_staged ADD COLUMN n INTEGER;
