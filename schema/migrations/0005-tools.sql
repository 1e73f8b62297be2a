-- Migration 5: the agent tool surface. What each tool call wrote, and each thread's active
-- skills. The calls themselves are rows of the spec's tool_calls (insert-only); these tables
-- only point at them.
--
-- Rules checked by `agentfs fsck`:
--   * every ws_tool_write.call_id names a tool_calls row.

-- ws_tool_write: one row per version a tool call made, so "which call wrote version 7 of
-- /src/app.py, with which arguments?" is one join with tool_calls.
--   call_id   tool_calls.id of the call
--   path      the symlink-free path whose history got the version (ws_version.path)
--   n         the version number (ws_version.n); the version row itself may be pruned later
--             by retention, the link stays as a record of what the call did
CREATE TABLE ws_tool_write (
  call_id INTEGER NOT NULL,
  path TEXT NOT NULL,
  n INTEGER NOT NULL,
  PRIMARY KEY (call_id, path, n)
) WITHOUT ROWID;
CREATE INDEX ws_tool_write_version ON ws_tool_write(path, n);

-- ws_skill_active: the skills a conversation thread has activated (workspace_activate_skill),
-- kept in the workspace so a resumed thread, another process or the MCP server sees them.
--   thread    the Toolset's thread ('' when it has none)
--   skill_id  the skill's directory name under /skills
--   at_ns     when it was activated
CREATE TABLE ws_skill_active (
  thread TEXT NOT NULL,
  skill_id TEXT NOT NULL,
  at_ns INTEGER NOT NULL,
  PRIMARY KEY (thread, skill_id)
) WITHOUT ROWID;
