-- tool_calls as Turso's agentfs SDKs (Rust, Python, TypeScript, Go) create it: the spec's
-- columns plus `status` ('pending' | 'success' | 'error') between `error` and `started_at`,
-- with completed_at and duration_ms nullable for calls still pending.
--
-- Used only by `export --agentfs`: the SDKs read this table by column position, so a table
-- made exactly as the spec text says makes agentfs-sdk's own reader fail (IndexError). Our
-- live workspaces keep the spec's table; agentfs/toolcalls.py reads either layout by column
-- name and fills `status` when it is there.
CREATE TABLE IF NOT EXISTS tool_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  parameters TEXT,
  result TEXT,
  error TEXT,
  status TEXT NOT NULL DEFAULT 'pending',
  started_at INTEGER NOT NULL,
  completed_at INTEGER,
  duration_ms INTEGER
);
