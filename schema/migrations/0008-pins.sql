-- Migration 8: pins that every connection sees.
--
-- A FUSE mount keeps an unlinked file's rows while a descriptor still has it open; its own
-- purge skips such inodes through a TEMP table, which other processes cannot see. So when an
-- inode that a connection holds open is queued in ws_orphan, that connection also writes a row
-- here, in the same transaction (a TEMP trigger of that connection: agentfs/core/orphans.py),
-- and deletes it when the last descriptor closes. Every purge skips a pinned inode whose holder
-- still runs, and deletes the pins of holders that are gone (a crash), so the inode is freed.
--   ino     the queued inode (ws_orphan.ino)
--   holder  the process: boot id, pid namespace, pid and start time (agentfs/core/holders.py)
CREATE TABLE IF NOT EXISTS ws_pin (
  ino INTEGER NOT NULL,
  holder TEXT NOT NULL,
  PRIMARY KEY (ino, holder)
) WITHOUT ROWID;
