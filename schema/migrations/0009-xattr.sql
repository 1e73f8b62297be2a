-- Migration 9: extended attributes (getxattr/setxattr/listxattr/removexattr), by inode.
--
-- The spec has no table for them, and its tables must keep their shape (agentfs-sdk reads
-- them), so they live here. They belong to the inode, not to a name: hard links share them, a
-- rename keeps them, and they go with the inode when it is freed (the orphan purge, a
-- directory's removal). History's copy-down gives the frozen inode a copy of them
-- (docs/history.md), so a restored file gets back the attributes its content had then.
--
-- Rules: every ws_xattr row belongs to an inode that exists (checked by `agentfs fsck`); a
-- name is 1..255 bytes of UTF-8 in a namespace the core stores (user., trusted., security.),
-- a value at most 65,536 bytes (agentfs/core/xattrs.py enforces them).

-- ws_xattr: one row per attribute.
--   ino    the fs_inode the attribute belongs to
--   name   the full name with its namespace, e.g. 'user.mime_type' (TEXT: UTF-8, as names of
--          files are; listed in code-point order)
--   value  the bytes, possibly empty
CREATE TABLE IF NOT EXISTS ws_xattr (
  ino INTEGER NOT NULL,
  name TEXT NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (ino, name)
) WITHOUT ROWID;
