-- The AgentFS specification v0.4 tables: the live tree, the key-value store and the tool-call log.
--
-- Semantics follow the specification exactly, so a file holding only these tables opens in Turso's
-- agentfs-sdk and vice versa. Statements use IF NOT EXISTS because the same script adopts a
-- database that agentfs-sdk created (it made the same tables already).
--
-- Our own rules on top of the spec (all checked by `agentfs fsck`):
--   * every chunk but a file's last is exactly fs_config.chunk_size bytes and a file's chunks are
--     contiguous from index 0, so SUM(length(data)) = fs_inode.size (holes are stored as zeros:
--     a reader that concatenates chunks, as the spec's readers do, must see the right bytes);
--   * directory nlink follows POSIX: 2 + number of child directories (root included);
--   * a directory has exactly one dentry (no hard links to directories), root has none.

-- fs_config: filesystem-wide settings, written when the workspace is created.
--   chunk_size      bytes per fs_data chunk; never changed after creation (the spec's rule).
--   schema_version  the AgentFS spec version the tables follow ('0.4'), as agentfs-sdk writes it.
--   workspace_schema  our own migration counter (see agentfs/db.py); the one key we update.
CREATE TABLE IF NOT EXISTS fs_config (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

-- fs_inode: one row per file, directory, symlink or special file.
--   ino      AUTOINCREMENT so a number is never reissued: a FUSE kernel or another process may
--            still hold the number of a file that was just deleted. Inode 1 is the root.
--   mode     S_IFMT type bits | permission bits.
--   nlink    files: number of dentries naming it; directories: 2 + child directories.
--   size     bytes of content (files), bytes of the target (symlinks), 0 (directories).
--   *time + *time_nsec   seconds and nanoseconds since the epoch, kept separately per the spec.
CREATE TABLE IF NOT EXISTS fs_inode (
  ino INTEGER PRIMARY KEY AUTOINCREMENT,
  mode INTEGER NOT NULL,
  nlink INTEGER NOT NULL DEFAULT 0,
  uid INTEGER NOT NULL DEFAULT 0,
  gid INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0,
  atime INTEGER NOT NULL,
  mtime INTEGER NOT NULL,
  ctime INTEGER NOT NULL,
  rdev INTEGER NOT NULL DEFAULT 0,
  atime_nsec INTEGER NOT NULL DEFAULT 0,
  mtime_nsec INTEGER NOT NULL DEFAULT 0,
  ctime_nsec INTEGER NOT NULL DEFAULT 0
);

-- fs_dentry: names. (parent_ino, name) is unique; name is one path component of at most 255
-- UTF-8 bytes, never '', '.', '..', and never holds '/' or NUL. id is AUTOINCREMENT so it can
-- serve as a stable readdir cursor while entries come and go.
CREATE TABLE IF NOT EXISTS fs_dentry (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  parent_ino INTEGER NOT NULL,
  ino INTEGER NOT NULL,
  UNIQUE(parent_ino, name)
);
CREATE INDEX IF NOT EXISTS idx_fs_dentry_parent ON fs_dentry(parent_ino, name);

-- fs_data: file content in fixed-size chunks; byte offset of a chunk = chunk_index * chunk_size.
-- A rowid table (not WITHOUT ROWID), exactly as the spec declares it.
CREATE TABLE IF NOT EXISTS fs_data (
  ino INTEGER NOT NULL,
  chunk_index INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (ino, chunk_index)
);

-- fs_symlink: the target of each symlink inode, stored verbatim (relative or absolute).
CREATE TABLE IF NOT EXISTS fs_symlink (
  ino INTEGER PRIMARY KEY,
  target TEXT NOT NULL
);

-- kv_store: agent state; value is always a JSON text. Timestamps are epoch seconds.
CREATE TABLE IF NOT EXISTS kv_store (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  created_at INTEGER DEFAULT (unixepoch()),
  updated_at INTEGER DEFAULT (unixepoch())
);
CREATE INDEX IF NOT EXISTS idx_kv_store_created_at ON kv_store(created_at);

-- tool_calls: an insert-only audit log of tool invocations. parameters/result are JSON texts;
-- exactly one of result and error is set; started_at/completed_at are epoch seconds.
CREATE TABLE IF NOT EXISTS tool_calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  parameters TEXT,
  result TEXT,
  error TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_tool_calls_name ON tool_calls(name);
CREATE INDEX IF NOT EXISTS idx_tool_calls_started_at ON tool_calls(started_at);
