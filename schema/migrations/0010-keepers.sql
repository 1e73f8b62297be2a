-- Migration 10: processes that keep the orphan queue.
--
-- A FUSE mount holds files open without writing a pin at each open (an open must stay a read),
-- so a file another process unlinks while the mount reads it has no durable pin (ws_pin) until
-- the mount itself queues it. While a mount runs it registers here, and every other
-- connection leaves the orphan queue to it: only the mount, which knows what it holds open,
-- frees queued inodes. A holder that is gone (a killed mount) no longer counts, and the next
-- purge deletes its row.
--   holder  the process: boot id, pid namespace, pid and start time (agentfs/core/holders.py)
CREATE TABLE IF NOT EXISTS ws_keeper (
  holder TEXT PRIMARY KEY
) WITHOUT ROWID;
