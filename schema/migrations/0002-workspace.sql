-- ws_orphan: inodes whose last name is gone but whose rows still exist.
--
-- Unlinking a large file or a whole tree only removes dentries and queues the inodes here, in the
-- same transaction; their fs_data chunks and fs_inode rows are freed afterwards in small batches
-- (agentfs/orphans.py), and again at the next open if a crash cut that short. An inode listed
-- here has nlink = 0 and no dentry.
CREATE TABLE IF NOT EXISTS ws_orphan (
  ino INTEGER PRIMARY KEY,
  queued_at INTEGER NOT NULL
);

-- idx_fs_dentry_parent duplicates the automatic index of UNIQUE(parent_ino, name): same columns,
-- same order. Every create, rename and unlink paid for both (one more page in each commit's WAL,
-- about 9 % of a small-file write). Lookups use the automatic index. `export --agentfs` writes
-- the index back, and agentfs-sdk recreates it whenever it opens a file, so interop is unchanged.
DROP INDEX IF EXISTS idx_fs_dentry_parent;
