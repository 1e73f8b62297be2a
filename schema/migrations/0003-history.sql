-- Migration 3: history. File versions, copy-on-write snapshots and read tracking.
--
-- The live tree stays in the spec tables. These tables only point into them: a version or a
-- snapshot entry names an fs_inode row whose content is then FROZEN (never changed in place: a
-- write first copies it down to a new nameless inode that history names from then on, and the
-- live file keeps its number; docs/history.md, "copy-down"). So versions and snapshots share
-- storage with the live tree and with each other, and a snapshot never copies file bytes.
-- docs/history.md has the diagram and the reasoning. Since migration 6 (0006-kept.sql) a small
-- file that only versions hold is changed in place instead, its older versions' bytes kept in
-- ws_kept (ws_version.ino NULL, ws_version.kept set); the rules below are as amended there.
--
-- Rules checked by `agentfs fsck`:
--   * every fs_inode row is named by a dentry, queued in ws_orphan, or referenced by
--     ws_version.ino / ws_entry.ino (frozen history); nothing else;
--   * ws_version.n counts from 1 per path (retention may prune the oldest); ino is NULL exactly
--     for 'delete' and 'move' rows, and a content row's inode has the recorded size;
--   * ws_entry intervals [born, died) of one (parent, name) never overlap, born < died;
--   * every inode number in ws_entry or ws_version is <= the fs_inode AUTOINCREMENT counter.

-- ws_config: our settings, one key per row (the spec's fs_config is left to the spec).
--   history.keep        'all' (default), 'none', or a number N: versions kept per path.
--   history.max_bytes   files larger than this are not versioned (default 16 MiB).
--   snapshot.watermark  the fs_inode counter when the last snapshot was taken: every inode at
--                       or below it may belong to a snapshot, so it is frozen. -1: no snapshot
--                       baseline yet (the next snapshot scans the whole tree).
CREATE TABLE ws_config (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
INSERT INTO ws_config(key, value) VALUES
  ('history.keep', 'all'),
  ('history.max_bytes', '16777216'),
  ('snapshot.watermark', '-1');

-- ws_version: the history of each path, like `git log -- path`, one row per event. WITHOUT
-- ROWID, keyed by (path, n): a versioned write adds one row to two b-trees (this and the ino
-- index), which keeps its cost near the plain write's.
--   path      the absolute, symlink-free workspace path the event happened to.
--   n         the event's number in that path's history, from 1.
--   op        'write' (new content), 'delete', 'move' (renamed away: other = where to),
--             'rename' (arrived by a rename: other = where from), 'link', 'restore'.
--   ino       the frozen inode holding this version's content; NULL for 'delete' and 'move'.
--   size, hash  content size and BLAKE2b-128 digest (hash NULL only for 'delete'/'move').
--   at_ns     when, in ns since the epoch; actor and thread: who, as set on the handle.
CREATE TABLE ws_version (
  path TEXT NOT NULL,
  n INTEGER NOT NULL,
  op TEXT NOT NULL,
  ino INTEGER,
  size INTEGER,
  hash BLOB,
  at_ns INTEGER NOT NULL,
  actor TEXT,
  thread TEXT,
  other TEXT,
  PRIMARY KEY (path, n)
) WITHOUT ROWID;
-- Is an inode frozen by some version? (asked before a write, and by garbage collection)
CREATE INDEX ws_version_ino ON ws_version(ino) WHERE ino IS NOT NULL;

-- ws_snapshot: named states of the whole tree. id is the snapshot's GENERATION: AUTOINCREMENT,
-- so a deleted snapshot's number is never reused by a later one (ws_entry intervals use it).
--   meta          free-form JSON text given by the caller (turn number, message id, ...).
CREATE TABLE ws_snapshot (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  thread TEXT,
  label TEXT,
  meta TEXT,
  created_ns INTEGER NOT NULL,
  actor TEXT,
  files INTEGER NOT NULL,
  bytes INTEGER NOT NULL
);
CREATE INDEX ws_snapshot_thread ON ws_snapshot(thread, id);

-- ws_entry: every directory entry any snapshot holds, with the generations it lived through.
-- Snapshot g contains the rows with born <= g AND (died IS NULL OR died > g); died IS NULL marks
-- the entries of the newest generation. A snapshot adds rows only for entries that changed, so
-- its cost and its size follow what changed, not the size of the tree.
--   parent, name   the entry (parent is a directory inode number; a deleted directory is
--                  re-created with its old number by restore, which AUTOINCREMENT allows).
--   ino, mode      what the name pointed at and its type|permissions at that generation.
--   mtime_ns       the entry's mtime (files and symlinks; 0 for directories, whose times
--                  change with every child and are not restored).
CREATE TABLE ws_entry (
  parent INTEGER NOT NULL,
  name TEXT NOT NULL,
  born INTEGER NOT NULL,
  died INTEGER,
  ino INTEGER NOT NULL,
  mode INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  PRIMARY KEY (parent, name, born)
) WITHOUT ROWID;
CREATE INDEX ws_entry_born ON ws_entry(born);
CREATE INDEX ws_entry_died ON ws_entry(died) WHERE died IS NOT NULL;
CREATE INDEX ws_entry_ino ON ws_entry(ino);

-- ws_dirty: directories whose entries (names, inodes, modes, mtimes) changed since the last
-- snapshot. A snapshot re-reads only these; the write path marks them (one probe when the
-- directory is already marked). Empty while no snapshot baseline exists.
CREATE TABLE ws_dirty (
  ino INTEGER PRIMARY KEY
);

-- ws_read: the last read of each path by each thread (read tracking, read-before-write).
--   ino, ctime_ns, size   the state read: a write, chmod or utime changes ctime, a copy-up the
--                         inode, so an unchanged pair proves nothing changed since.
--   n, hash        the version read (n NULL when the path has no history) and the content
--                  digest when known (whole-file reads and versioned files).
--   ranged         1 when only part of the file was read (offset/length).
CREATE TABLE ws_read (
  thread TEXT NOT NULL,
  path TEXT NOT NULL,
  ino INTEGER NOT NULL,
  ctime_ns INTEGER NOT NULL,
  size INTEGER NOT NULL,
  n INTEGER,
  hash BLOB,
  ranged INTEGER NOT NULL,
  at_ns INTEGER NOT NULL,
  PRIMARY KEY (thread, path)
) WITHOUT ROWID;
