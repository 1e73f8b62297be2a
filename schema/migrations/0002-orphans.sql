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
