-- Migration 11: log rows of changing tool calls, staged.
--
-- A tool call that changes the workspace is logged in the change's own transaction, so a
-- change never exists without its log row. Written straight into the spec's tool_calls, that
-- row touches five B-trees (the table, its two indexes, the AUTOINCREMENT counter, and
-- ws_tool_write with its index): measured, 110 µs of a 1 KiB write_file's 200 µs. Staged
-- here it touches one. Staged rows move into tool_calls, with their ws_tool_write links, in
-- batches (agentfs/toolcalls.py `publish`): when the toolset flushes its waiting read-only
-- rows, when the MCP server is idle, before a sync sends the log, before an export or the
-- timeline reads it. Any writer may move any staged row (one left by a killed process too).
--   id            order of staging
--   name          the tool
--   parameters, result, error   as tool_calls stores them (JSON texts; the error's message)
--   started_at, completed_at    epoch seconds with their fraction (tool_calls keeps whole ones)
--   writes        JSON list of the [path, n] versions the call made (ws_tool_write's rows)
CREATE TABLE IF NOT EXISTS ws_tool_call_staged (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  parameters TEXT,
  result TEXT,
  error TEXT,
  started_at REAL NOT NULL,
  completed_at REAL NOT NULL,
  writes TEXT NOT NULL
);
