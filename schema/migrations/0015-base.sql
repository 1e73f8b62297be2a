-- Migration 15: a host directory under the workspace (an overlay, docs/overlay.md).
--
-- The host directory is the workspace's lowest layer, brought in one directory at a time: the
-- first time a directory of it is needed, its entries become ordinary inodes and dentries (the
-- host's modes, times, symlinks and hard links), so the mount, history, snapshots, search and
-- sync see one tree. The host is never written by reading or changing the workspace; only
-- `agentfs apply` writes it, after checking each file is still what the workspace saw.
--
-- ws_base: the host directory, one row or none (a workspace without a base).
--   root   the host directory's absolute path
CREATE TABLE IF NOT EXISTS ws_base (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  root TEXT NOT NULL
);

-- ws_origin: every name brought in from the base, and what the workspace saw of it there. A
-- row outlives the name: an origin whose inode no longer has its name is a base entry the
-- workspace deleted or moved (moved when the inode has a name no origin accounts for).
--   path       the name's path in the base, '/'-separated from the host directory ('' the root)
--   ino        the fs_inode it became (a host file with several names: one inode, a row each)
--   host_dev   st_dev and st_ino of the host entry
--   host_ino
--   mode       st_mode, size, st_mtime_ns and st_ctime_ns as seen when brought in
--   size
--   mtime_ns
--   ctime_ns
--   hash       SHA-256 of a file's content as read, of a symlink's target (NULL: a directory)
--   listed     0 for a directory whose host entries are not in the workspace yet
CREATE TABLE IF NOT EXISTS ws_origin (
  path TEXT PRIMARY KEY,
  ino INTEGER NOT NULL,
  host_dev INTEGER NOT NULL,
  host_ino INTEGER NOT NULL,
  mode INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  hash BLOB,
  listed INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS ws_origin_ino ON ws_origin(ino);
CREATE INDEX IF NOT EXISTS ws_origin_host ON ws_origin(host_dev, host_ino);

-- ws_apply: what `agentfs apply` is writing into the host, so a run killed part-way is finished
-- by the next: each row is a host path and what the workspace puts there, written before the
-- host is touched and deleted once the origins are brought up to date. A host file that
-- already holds `hash` (or, for a deletion, is gone) was written by the killed run.
--   path   the host path, relative to the base ('/'-separated)
--   hash   SHA-256 of the file's new bytes or the symlink's new target; NULL: deleted
--   mode   the new st_mode (file type and permissions); NULL: deleted
CREATE TABLE IF NOT EXISTS ws_apply (
  path TEXT PRIMARY KEY,
  hash BLOB,
  mode INTEGER
);
