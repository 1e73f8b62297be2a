-- Migration 6: versioned writes in place. The newest version of a live file names the file's
-- own inode; before that inode's bytes change, each older version that still names it gets its
-- bytes kept here and stops naming the inode. So a versioned overwrite of a small file changes
-- the file where it is (no new inode, no repointed name) and appends one row here.
-- docs/history.md has the reasoning and the measurements.
--
-- Rules checked by `agentfs fsck`:
--   * a ws_version row names an inode (ino) or kept bytes (kept), never both; content rows
--     ('write', 'rename', 'link', 'restore') one of them, 'delete' and 'move' rows neither;
--   * every ws_kept row is named by exactly one ws_version row, and holds `size` bytes.

-- ws_kept: the bytes of versions whose inode has moved on. A rowid table, so a new row is an
-- append to its last page (rows of up to ~4 KiB stay on their leaf page), and freeing one is a
-- delete by id when retention prunes its version.
--   id     named by ws_version.kept
--   data   the version's whole content
CREATE TABLE ws_kept (
  id INTEGER PRIMARY KEY,
  data BLOB NOT NULL
);

-- ws_version.kept: the ws_kept row holding this version's bytes (ino is then NULL).
ALTER TABLE ws_version ADD COLUMN kept INTEGER;
