-- Migration 16: a file of the base comes in as its name and its stat first, its bytes when
-- first read or changed (docs/overlay.md, "How the host comes in").
--
-- ws_origin.listed becomes ws_origin.present, which now says the same of a file as it said of
-- a directory:
--   present    0 while what the host holds there is not in the workspace yet: a directory's
--              entries, or a file's bytes (the inode has its size but no fs_data rows, and
--              hash is NULL); 1 once it is
-- (the rename runs only where the column is still `listed`: agentfs.db._present)
DROP INDEX IF EXISTS ws_origin_unlisted;
CREATE INDEX IF NOT EXISTS ws_origin_absent ON ws_origin((mode & 61440), ino) WHERE present = 0;
